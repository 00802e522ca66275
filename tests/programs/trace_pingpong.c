/* A ping-pong of 2 ranks for the order of a trace's times (tests/tools/trace_checks.sh
 * pingpong): ROUNDS round trips (argument 1, default 2000) of messages of 8 bytes (whose receive
 * ends without reading the clock, bounded by the sender's stamp), 20 bytes (which fill the
 * receive slot's line, so their receive's end reads the clock) and 100 bytes (copied outside the
 * line), in turn. Round i's two messages have tag i, so that a reader of the trace can pair each
 * send with the receive that took it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "trace_pingpong: expected 2 ranks, got %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  static const int kSizes[] = {8, 20, 100};
  char buffer[100] = {0};
  for (int i = 0; i < rounds; ++i) {
    const int bytes = kSizes[i % 3];
    if (rank == 0) {
      buffer[0] = (char)i;
      MPI_Send(buffer, bytes, MPI_BYTE, 1, i, MPI_COMM_WORLD);
      MPI_Recv(buffer, bytes, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer, bytes, MPI_BYTE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer, bytes, MPI_BYTE, 0, i, MPI_COMM_WORLD);
    }
    if (buffer[0] != (char)i) {
      fprintf(stderr, "rank %d: round %d received %d\n", rank, i, buffer[0]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (rank == 0) printf("No Errors\n");
  MPI_Finalize();
  return 0;
}
