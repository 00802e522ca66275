/* Ping-pong latency between ranks 0 and 1, 8 B to 4 MiB: half the round trip of a blocking
 * Send/Recv pair. Prints `RESULT latency_<size> <microseconds> us`. Run with 2 ranks (more are
 * allowed; they only take part in the timing barriers). */
#include "bench_mpi.h"

struct pingpong {
  char* buffer;
  int bytes;
  int rank;
};

static void round_trip(void* context) {
  struct pingpong* p = context;
  if (p->rank == 0) {
    MPI_Send(p->buffer, p->bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    MPI_Recv(p->buffer, p->bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (p->rank == 1) {
    MPI_Recv(p->buffer, p->bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(p->buffer, p->bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) bench_fail("pingpong needs at least 2 ranks", rank);
  const double seconds = bench_seconds(argc, argv);
  static const int kSizes[] = {8,        64,        512,     4 << 10, 16 << 10,
                               64 << 10, 256 << 10, 1 << 20, 4 << 20};
  const int largest = kSizes[sizeof kSizes / sizeof kSizes[0] - 1];
  struct pingpong p = {bench_buffer(largest, 0), 0, rank};
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i) {
    p.bytes = kSizes[i];
    /* Rank 0 stamps the message, rank 1 checks it arrived whole before timing anything. */
    if (rank == 0) memset(p.buffer, (int)(i + 1), (size_t)p.bytes);
    round_trip(&p);
    if (rank == 1 && (p.buffer[0] != (char)(i + 1) || p.buffer[p.bytes - 1] != (char)(i + 1))) {
      bench_fail("pingpong received wrong data", rank);
    }
    const double round_trip_seconds = bench_measure(MPI_COMM_WORLD, round_trip, &p, seconds);
    if (rank == 0) {
      char name[64];
      char size_name[32];
      bench_size_name(size_name, sizeof size_name, p.bytes);
      snprintf(name, sizeof name, "latency_%s", size_name);
      bench_result(name, round_trip_seconds / 2.0 * 1e6, "us");
    }
  }
  free(p.buffer);
  MPI_Finalize();
  return 0;
}
