/* Barrier, Bcast of 1 MiB, Allreduce and Reduce of 8 B (one double, MPI_SUM), Bcast and
 * Allgather of 8 B per rank and Alltoall of 1 KiB per pair of ranks, at whatever size
 * MPI_COMM_WORLD has. Prints `RESULT <collective>_<N>ranks <us> us`,
 * e.g. `RESULT allreduce_8B_64ranks 12.5 us`: the slowest rank's time per call. Each collective's
 * answer is checked once before it is timed. */
#include "bench_mpi.h"

enum { kBcastBytes = 1 << 20, kAlltoallBytes = 1 << 10 };

struct buffers {
  char* bcast;
  char* alltoall_send;
  char* alltoall_receive;
  double value;
  double sum;
  double* gathered; /* one double per rank */
};

static void barrier(void* context) {
  (void)context;
  MPI_Barrier(MPI_COMM_WORLD);
}

static void bcast(void* context) {
  struct buffers* b = context;
  MPI_Bcast(b->bcast, kBcastBytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void allreduce(void* context) {
  struct buffers* b = context;
  MPI_Allreduce(&b->value, &b->sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void reduce(void* context) {
  struct buffers* b = context;
  MPI_Reduce(&b->value, &b->sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
}

static void bcast_small(void* context) {
  struct buffers* b = context;
  MPI_Bcast(&b->sum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static void allgather(void* context) {
  struct buffers* b = context;
  MPI_Allgather(&b->value, 1, MPI_DOUBLE, b->gathered, 1, MPI_DOUBLE, MPI_COMM_WORLD);
}

static void alltoall(void* context) {
  struct buffers* b = context;
  MPI_Alltoall(b->alltoall_send, kAlltoallBytes, MPI_BYTE, b->alltoall_receive, kAlltoallBytes,
               MPI_BYTE, MPI_COMM_WORLD);
}

/* The byte rank `from` sends to rank `to` in the Alltoall. */
static char alltoall_byte(int from, int to) {
  return (char)((from * 31 + to * 7 + 1) & 0x7f);
}

static void check_answers(struct buffers* b, int rank, int size) {
  bcast(b);
  if (b->bcast[0] != 'b' || b->bcast[kBcastBytes - 1] != 'b') bench_fail("Bcast: wrong data", rank);
  allreduce(b);
  if (b->sum != (double)size * (size + 1) / 2) bench_fail("Allreduce: wrong sum", rank);
  b->sum = 0;
  reduce(b);
  if (rank == 0 && b->sum != (double)size * (size + 1) / 2) bench_fail("Reduce: wrong sum", rank);
  bcast_small(b);
  if (b->sum != (double)size * (size + 1) / 2) bench_fail("Bcast 8 B: wrong value", rank);
  allgather(b);
  for (int from = 0; from < size; ++from) {
    if (b->gathered[from] != from + 1) bench_fail("Allgather: wrong data", rank);
  }
  alltoall(b);
  for (int from = 0; from < size; ++from) {
    const char* block = b->alltoall_receive + (long)from * kAlltoallBytes;
    if (block[0] != alltoall_byte(from, rank) || block[kAlltoallBytes - 1] != block[0]) {
      bench_fail("Alltoall: wrong data", rank);
    }
  }
}

static void report(const char* collective, double seconds, int rank, int size) {
  if (rank != 0) return;
  char name[64];
  snprintf(name, sizeof name, "%s_%dranks", collective, size);
  bench_result(name, seconds * 1e6, "us");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double seconds = bench_seconds(argc, argv);
  struct buffers b;
  b.bcast = bench_buffer(kBcastBytes, rank == 0 ? 'b' : 0);
  b.alltoall_send = bench_buffer((long)size * kAlltoallBytes, 0);
  b.alltoall_receive = bench_buffer((long)size * kAlltoallBytes, 0);
  for (int to = 0; to < size; ++to) {
    memset(b.alltoall_send + (long)to * kAlltoallBytes, alltoall_byte(rank, to), kAlltoallBytes);
  }
  b.value = rank + 1;
  b.gathered = (double*)bench_buffer((long)size * (long)sizeof(double), 0);
  check_answers(&b, rank, size);

  report("barrier", bench_measure(MPI_COMM_WORLD, barrier, NULL, seconds), rank, size);
  report("allreduce_8B", bench_measure(MPI_COMM_WORLD, allreduce, &b, seconds), rank, size);
  report("bcast_1MiB", bench_measure(MPI_COMM_WORLD, bcast, &b, seconds), rank, size);
  report("reduce_8B", bench_measure(MPI_COMM_WORLD, reduce, &b, seconds), rank, size);
  report("bcast_8B", bench_measure(MPI_COMM_WORLD, bcast_small, &b, seconds), rank, size);
  report("allgather_8B", bench_measure(MPI_COMM_WORLD, allgather, &b, seconds), rank, size);
  report("alltoall_1KiB", bench_measure(MPI_COMM_WORLD, alltoall, &b, seconds), rank, size);

  free(b.bcast);
  free(b.alltoall_send);
  free(b.alltoall_receive);
  free(b.gathered);
  MPI_Finalize();
  return 0;
}
