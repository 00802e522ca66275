/* A classic MPI ring, in plain MPI: rank 0 sends a token to rank 1, each rank adds its rank and
 * passes it on, and the last rank sends it back to rank 0, for a few laps. Build and run it as a
 * user would:
 *
 *   build/bin/weftcc -O2 -o ring examples/ring.c
 *   build/bin/weftrun -n 8 ./ring
 */
#include <mpi.h>
#include <stdio.h>

enum { LAPS = 3, TAG = 7 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  char host[MPI_MAX_PROCESSOR_NAME];
  int host_length = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &host_length);
  printf("rank %d of %d on %s\n", rank, size, host);

  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  long token = 0;
  for (int lap = 0; lap < LAPS; ++lap) {
    if (rank == 0) {
      token += rank;
      MPI_Send(&token, 1, MPI_LONG, next, TAG, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_LONG, previous, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_LONG, previous, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token += rank;
      MPI_Send(&token, 1, MPI_LONG, next, TAG, MPI_COMM_WORLD);
    }
  }

  int status = 0;
  if (rank == 0) {
    const long expected = (long)LAPS * size * (size - 1) / 2;
    printf("ring: the token went %d times around %d ranks and reads %ld (expected %ld)\n", LAPS,
           size, token, expected);
    status = token == expected ? 0 : 1;
  }
  MPI_Finalize();
  return status;
}
