/* How a job ends, for weftrun's tests:
 *   exit_status return R C   rank R returns C from main, the others 0
 *   exit_status abort R C    rank R calls MPI_Abort(MPI_COMM_WORLD, C), the others wait
 *   exit_status exit R C     rank R calls exit(C) before MPI_Finalize, the others wait
 *   exit_status hang         rank 0 prints "pid <process id>", then every rank waits forever
 *   exit_status hang-ignoring-sigterm   the same, SIGTERM ignored */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void hang(int rank) {
  if (rank == 0) {
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
  }
  int never = 0;
  MPI_Recv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "return") == 0 && argc == 4) {
    MPI_Finalize();
    return rank == atoi(argv[2]) ? atoi(argv[3]) : 0;
  }
  if (strcmp(mode, "abort") == 0 && argc == 4) {
    if (rank == atoi(argv[2])) MPI_Abort(MPI_COMM_WORLD, atoi(argv[3]));
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "exit") == 0 && argc == 4) {
    if (rank == atoi(argv[2])) exit(atoi(argv[3]));
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "hang") == 0) {
    hang(rank);
  } else if (strcmp(mode, "hang-ignoring-sigterm") == 0) {
    if (rank == 0) signal(SIGTERM, SIG_IGN);
    hang(rank);
  } else {
    fprintf(stderr,
            "usage: exit_status return|abort|exit RANK CODE, or hang, hang-ignoring-sigterm\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
