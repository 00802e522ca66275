#include <mpi.h>
#include <stdio.h>

int square(int value);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  printf("hello from rank %d of %d (C++ says %d)\n", rank, size, square(rank));
  MPI_Finalize();
  return 0;
}
