/* A rank's exit ends that rank only (docs/privatization.md, "A rank's exit"). After
 * MPI_Finalize, rank 0 calls exit(0) (the rank image's), rank 1 _exit(0) and rank 2 exit(0) from
 * an external shared library (as the Fortran run-time's STOP does); ranks 0 and 2 run their
 * atexit handler, rank 1 must run none. The other ranks, those of rank 0's process once ranks 0
 * and 2 have run their handlers, then compute and communicate, and the last rank prints
 * " No Errors". Before ranks had their own exit, the first exit ended the process and no rank
 * printed it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "shared_counters.h"

enum { kExited = 0, kWithRankZero = 1, kQuickHandler = 2 };
enum { kLeaving = 3 }; /* ranks 0, 1 and 2 leave early */

static void count_exit(void) {
  weft_test_counter_add(kExited, 1);
}
static void quick_exit_handler(void) {
  weft_test_counter_add(kQuickHandler, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < kLeaving + 2) {
    fprintf(stderr, "rank_exit needs %d ranks or more\n", kLeaving + 2);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* The ranks that share rank 0's process learn it from a counter of that process. */
  if (rank == 0) weft_test_counter_add(kWithRankZero, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  const int with_rank_zero = weft_test_counter_read(kWithRankZero) == 1;
  if (rank == 0) {
    /* Ranks 0 and 2 share a process in one process and with -p 2 (ranks 0-2 of 6). */
    weft_test_counter_expect_at_unload(kExited, 2);
    weft_test_counter_expect_at_unload(kQuickHandler, 0);
  }
  MPI_Comm others;
  MPI_Comm_split(MPI_COMM_WORLD, rank < kLeaving ? MPI_UNDEFINED : 0, rank, &others);
  if (rank < kLeaving) {
    atexit(rank == 1 ? quick_exit_handler : count_exit);
    MPI_Finalize();
    if (rank == 0) exit(0);
    if (rank == 1) _exit(0);
    weft_test_exit(0);
  }
  while (with_rank_zero && weft_test_counter_read(kExited) < 2) usleep(1000);
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
  /* Each round adds round * (kLeaving + ... + size - 1). */
  const long ranks_sum = (long)size * (size - 1) / 2 - (long)kLeaving * (kLeaving - 1) / 2;
  const long expected = 199L * 200 / 2 * ranks_sum;
  MPI_Comm_free(&others);
  MPI_Finalize();
  if (sum != expected) {
    fprintf(stderr, "rank %d: sum %ld, expected %ld\n", rank, sum, expected);
    return 1;
  }
  if (rank == size - 1) printf(" No Errors\n");
  return 0;
}
