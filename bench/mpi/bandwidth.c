/* Streaming bandwidth from rank 0 to rank 1 at 64 KiB and 4 MiB: windows of 64 Isend/Irecv in
 * flight, then a 1-byte acknowledgement, as OSU's osu_bw does. Each pending receive has its own
 * buffer (overlapping pending receives would be erroneous MPI); the sends share one buffer.
 * Prints `RESULT bandwidth_<size> <MB/s> MB/s` (1 MB = 10^6 bytes). Run with 2 ranks. */
#include "bench_mpi.h"

enum { kWindow = 64 };

struct stream {
  char* send_buffer;
  char* receive_buffers;
  int bytes;
  int rank;
};

static void window(void* context) {
  struct stream* s = context;
  MPI_Request requests[kWindow];
  char ack = 0;
  if (s->rank == 0) {
    for (int i = 0; i < kWindow; ++i) {
      MPI_Isend(s->send_buffer, s->bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &requests[i]);
    }
    MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE);
    MPI_Recv(&ack, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (s->rank == 1) {
    for (int i = 0; i < kWindow; ++i) {
      MPI_Irecv(s->receive_buffers + (long)i * s->bytes, s->bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                &requests[i]);
    }
    MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE);
    MPI_Send(&ack, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) bench_fail("bandwidth needs at least 2 ranks", rank);
  const double seconds = bench_seconds(argc, argv);
  static const int kSizes[] = {64 << 10, 4 << 20};
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i) {
    const int bytes = kSizes[i];
    struct stream s = {NULL, NULL, bytes, rank};
    if (rank == 0) s.send_buffer = bench_buffer(bytes, 'a' + (int)i);
    if (rank == 1) s.receive_buffers = bench_buffer((long)kWindow * bytes, 0);
    window(&s);
    if (rank == 1) {
      for (int w = 0; w < kWindow; ++w) {
        const char* received = s.receive_buffers + (long)w * bytes;
        if (received[0] != 'a' + (int)i || received[bytes - 1] != 'a' + (int)i) {
          bench_fail("bandwidth received wrong data", rank);
        }
      }
    }
    const double window_seconds = bench_measure(MPI_COMM_WORLD, window, &s, seconds);
    if (rank == 0) {
      char name[64];
      char size_name[32];
      bench_size_name(size_name, sizeof size_name, bytes);
      snprintf(name, sizeof name, "bandwidth_%s", size_name);
      bench_result(name, (double)kWindow * bytes / window_seconds / 1e6, "MB/s");
    }
    free(s.send_buffer);
    free(s.receive_buffers);
  }
  MPI_Finalize();
  return 0;
}
