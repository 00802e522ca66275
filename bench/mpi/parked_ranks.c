/* Every rank parked in MPI for a while: what the deadlock watcher looks at every period.
 * bench/mpi/watcher_run measures the watcher's CPU time meanwhile. After the first barrier rank 0
 * prints "ready", sleeps argv[1] seconds (default 10) and joins the others, parked in a second
 * barrier. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ready\n");
    fflush(stdout);
    sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 10);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
