/* A fixed number of 8-byte MPI_Put or MPI_Get, each followed by MPI_Win_flush, from rank 0 to
 * rank 1 inside an MPI_Win_lock_all epoch, for counting instructions per operation
 * (bench/mpi/rma_instructions, under callgrind), not for timing: rank 1 only waits in a barrier.
 * `ucx_rma_floor <allocate|map> count <put|get> <operations>` does the same with UCX alone.
 *
 * usage: rma_ops <allocate|create> <put|get> <operations>. The window is 4 MiB, made by
 * MPI_Win_allocate or by MPI_Win_create on malloc'd memory, as in bench/mpi/rma.c. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBytes = 4 << 20 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 4 || (strcmp(argv[1], "allocate") != 0 && strcmp(argv[1], "create") != 0) ||
      (strcmp(argv[2], "put") != 0 && strcmp(argv[2], "get") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: rma_ops <allocate|create> <put|get> <operations>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long operations = atol(argv[3]);
  const int put = strcmp(argv[2], "put") == 0;
  char* memory = NULL;
  MPI_Win win;
  if (strcmp(argv[1], "create") == 0) {
    memory = malloc(kBytes);
    if (memory == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(memory, 0, kBytes);
    MPI_Win_create(memory, kBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  } else {
    MPI_Win_allocate(kBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    memset(memory, 0, kBytes);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    char buffer[8] = "weft-rma";
    MPI_Win_lock_all(0, win);
    for (long i = 0; i < operations; ++i) {
      if (put) {
        MPI_Put(buffer, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
      } else {
        MPI_Get(buffer, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
      }
      MPI_Win_flush(1, win);
    }
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (put && rank == 1 && memcmp(memory, "weft-rma", 8) != 0) {
    fprintf(stderr, "rma_ops: the puts did not reach rank 1\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Win_free(&win);
  if (strcmp(argv[1], "create") == 0) free(memory);
  MPI_Finalize();
  return 0;
}
