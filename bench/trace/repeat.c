/* A fixed number of repetitions of one operation, for counting what recording a trace costs in
 * instructions (bench/trace/run): unlike bench/mpi and bench/omp, whose iteration counts follow
 * the clock, the work done here is the same on a loaded machine and on a quiet one.
 *
 *   repeat <operation> <repetitions>
 *
 * operations: pingpong (an 8-byte MPI_Send/MPI_Recv round trip between ranks 0 and 1),
 * barrier (MPI_Barrier on every rank), omp_parallel (an empty parallel region), omp_barrier (a
 * barrier of the team), omp_critical (each thread of the team enters a critical section). */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int sink;

static void pingpong(long repetitions, int rank) {
  char buffer[8] = {0};
  for (long i = 0; i < repetitions; ++i) {
    if (rank == 0) {
      MPI_Send(buffer, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buffer, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buffer, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* operation = argc > 1 ? argv[1] : "";
  const long repetitions = argc > 2 ? atol(argv[2]) : 0;
  /* The team exists before the repetitions: its creation is not counted in them. */
#pragma omp parallel
  sink++;
  if (strcmp(operation, "pingpong") == 0) {
    pingpong(repetitions, rank);
  } else if (strcmp(operation, "barrier") == 0) {
    for (long i = 0; i < repetitions; ++i) MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(operation, "omp_parallel") == 0) {
    for (long i = 0; i < repetitions; ++i) {
#pragma omp parallel
      (void)sink;
    }
  } else if (strcmp(operation, "omp_barrier") == 0) {
#pragma omp parallel
    for (long i = 0; i < repetitions; ++i) {
#pragma omp barrier
    }
  } else if (strcmp(operation, "omp_critical") == 0) {
#pragma omp parallel
    for (long i = 0; i < repetitions; ++i) {
#pragma omp critical
      sink++;
    }
  } else {
    fprintf(stderr, "repeat: unknown operation '%s'\n", operation);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
