// Writes a lot of standard output from every rank between collectives, as a program logging its
// progress does, without checking printf's result: the faults checks (faults.sh disk_full) run it
// with its output on a full file system.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int lines = argc > 1 ? atoi(argv[1]) : 2000;
  for (int i = 0; i < lines; ++i) {
    printf("rank %d line %d: the quick brown fox jumps over the lazy dog, again and again\n", rank,
           i);
    if (i % 100 == 0) {
      int sum = 0;
      MPI_Allreduce(&i, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
