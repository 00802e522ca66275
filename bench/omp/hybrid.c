/* The hybrid case of the OpenMP benchmark: every rank loops over a parallel region of its
 * threads (a short delay each, then the region's barrier) followed by an MPI_Allreduce, for about
 * SECONDS. Rank 0 prints `HYBRID <ranks>x<threads> <microseconds per iteration>`. Built with
 * weftcc -fopenmp and with Open MPI's mpicc -fopenmp (libgomp) by bench/omp/run. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

enum { DELAY = 60 };
static const double SECONDS = 1.0;

static volatile double sink;

static void delay(void) {
  double a = 0;
  for (int i = 0; i < DELAY; ++i) a += i;
  sink += a;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double start = MPI_Wtime();
  long iterations = 0;
  /* Rank 0 decides when to stop; the Allreduce (MAX) carries its decision to every rank. */
  for (int stop = 0; !stop; ++iterations) {
#pragma omp parallel
    {
      delay();
#pragma omp barrier
    }
    const int mine = rank == 0 && MPI_Wtime() - start >= SECONDS;
    MPI_Allreduce(&mine, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  if (rank == 0) {
    printf("HYBRID %dx%d %.3f\n", size, omp_get_max_threads(),
           (MPI_Wtime() - start) * 1e6 / (double)iterations);
  }
  MPI_Finalize();
  return 0;
}
