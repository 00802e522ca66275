/* The smallest useful job: Init, one Allreduce, Finalize. bench/mpi/run times a whole launch of
 * it with many ranks (`weftrun -n 4096`). Exits non-zero when the sum is wrong. */
#include "bench_mpi.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long value = rank;
  long sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (sum != (long)size * (size - 1) / 2) bench_fail("Allreduce: wrong sum", rank);
  MPI_Finalize();
  return 0;
}
