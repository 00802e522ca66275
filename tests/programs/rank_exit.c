/* A rank's exit() ends that rank only (docs/privatization.md, "A rank's exit"): rank 0 finalizes
 * and calls exit(0) at once, running its atexit handler; the other ranks, some of which wait
 * until rank 0's handler has run (those of its process), then compute and communicate, and the
 * last rank prints " No Errors". Before ranks had their own exit, rank 0's exit ended the
 * process and no rank printed it. Rank 1's exit goes through _exit, which runs no handler. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "shared_counters.h"

enum { kExited = 0, kWithRankZero = 1, kQuickHandler = 2 };

static void rank_zero_at_exit(void) {
  weft_test_counter_add(kExited, 1);
}
static void rank_one_at_exit(void) {
  weft_test_counter_add(kQuickHandler, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3) {
    fprintf(stderr, "rank_exit needs 3 ranks or more\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* The ranks that share rank 0's process learn it from a counter of that process. */
  if (rank == 0) {
    weft_test_counter_add(kWithRankZero, 1);
    weft_test_counter_expect_at_unload(kExited, 1);
    weft_test_counter_expect_at_unload(kQuickHandler, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int with_rank_zero = weft_test_counter_read(kWithRankZero) == 1;
  MPI_Comm others;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? MPI_UNDEFINED : 0, rank, &others);
  if (rank == 0) {
    atexit(rank_zero_at_exit);
    MPI_Finalize();
    exit(0);
  }
  if (rank == 1) {
    atexit(rank_one_at_exit);
    MPI_Finalize();
    _exit(0);
  }
  while (with_rank_zero && weft_test_counter_read(kExited) == 0) usleep(1000);
  int other_rank = 0, others_size = 0;
  MPI_Comm_rank(others, &other_rank);
  MPI_Comm_size(others, &others_size);
  long sum = 0;
  for (int round = 0; round < 200; ++round) {
    long value = (long)rank * round, received = 0;
    MPI_Sendrecv(&value, 1, MPI_LONG, (other_rank + 1) % others_size, 0, &received, 1, MPI_LONG,
                 (other_rank + others_size - 1) % others_size, 0, others, MPI_STATUS_IGNORE);
    MPI_Allreduce(MPI_IN_PLACE, &received, 1, MPI_LONG, MPI_SUM, others);
    sum += received;
  }
  /* sum over rounds of round * (2 + ... + size-1) */
  const long expected = 199L * 200 / 2 * ((long)size * (size - 1) / 2 - 1);
  MPI_Comm_free(&others);
  MPI_Finalize();
  if (sum != expected) {
    fprintf(stderr, "rank %d: sum %ld, expected %ld\n", rank, sum, expected);
    return 1;
  }
  if (rank == size - 1) printf(" No Errors\n");
  return 0;
}
