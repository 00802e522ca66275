/* A C main calling Fortran routines that call MPI (mixed_routines.f90): handles cross the
 * language boundary as MPI_Fint through MPI_Comm_c2f/f2c, both ways. */
#include <mpi.h>
#include <stdio.h>

/* Fortran subroutines (gfortran's names: lower case, one underscore, arguments by reference). */
void ring_sum_(const MPI_Fint* comm, const MPI_Fint* value, MPI_Fint* total);
void split_even_odd_(const MPI_Fint* comm, MPI_Fint* newcomm);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, errs = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Fint fdup = MPI_Comm_c2f(dup), value = rank + 1, total = 0;
  ring_sum_(&fdup, &value, &total);
  if (total != size * (size + 1) / 2) ++errs;

  /* A communicator the Fortran code made, used from C. */
  MPI_Fint fhalf = 0;
  split_even_odd_(&fdup, &fhalf);
  MPI_Comm half = MPI_Comm_f2c(fhalf);
  int half_size = 0;
  if (half == MPI_COMM_NULL || MPI_Comm_size(half, &half_size) != MPI_SUCCESS) ++errs;
  if (half_size != (size + 1 - rank % 2) / 2) ++errs;
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);

  MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (errs == 0) {
      printf(" No Errors\n");
    } else {
      printf(" Found %d errors\n", errs);
    }
  }
  MPI_Finalize();
  return errs != 0;
}
