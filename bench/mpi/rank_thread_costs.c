/* What a kernel thread started by a rank costs (docs/architecture.md, "Threads a rank starts"):
 * - create_join: pthread_create and pthread_join of an empty thread, in rank 0;
 * - comm_rank_rank, comm_rank_thread: one MPI_Comm_rank from the rank and from its thread;
 * - latency_rank, latency_thread: half an 8-byte Send/Recv round trip between ranks 0 and 1, made
 *   by the ranks themselves and then by one thread each of them started.
 * Prints `RESULT <name> <microseconds> us` from rank 0. Run with 2 ranks, under weftrun and under
 * another MPI (built with its mpicc) for comparison. */
#include <pthread.h>

#include "bench_mpi.h"

enum { kRoundTrips = 20000, kCalls = 1000000, kCreations = 2000 };

static int rank;

static void* empty(void* argument) {
  return argument;
}

static void* comm_rank_loop(void* result) {
  int me = -1;
  const double start = MPI_Wtime();
  for (int i = 0; i < kCalls; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &me);
  *(double*)result = (MPI_Wtime() - start) / kCalls * 1e6;
  return NULL;
}

static void* ping_pong(void* result) {
  char byte[8] = {0};
  const int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < kRoundTrips; ++i) {
    if (rank == 0) {
      MPI_Send(byte, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(byte, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(byte, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(byte, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
  *(double*)result = (MPI_Wtime() - start) / kRoundTrips / 2 * 1e6;
  return NULL;
}

static double in_thread(void* (*body)(void*)) {
  double result = 0;
  pthread_t thread;
  if (pthread_create(&thread, NULL, body, &result) != 0) bench_fail("pthread_create", rank);
  pthread_join(thread, NULL);
  return result;
}

int main(int argc, char** argv) {
  int provided = 0, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || provided != MPI_THREAD_MULTIPLE) {
    bench_fail("rank_thread_costs needs 2 ranks and MPI_THREAD_MULTIPLE", rank);
  }
  if (rank == 0) {
    const double start = MPI_Wtime();
    for (int i = 0; i < kCreations; ++i) {
      pthread_t thread;
      if (pthread_create(&thread, NULL, empty, NULL) != 0) bench_fail("pthread_create", rank);
      pthread_join(thread, NULL);
    }
    bench_result("create_join", (MPI_Wtime() - start) / kCreations * 1e6, "us");
    double in_rank = 0;
    comm_rank_loop(&in_rank);
    bench_result("comm_rank_rank", in_rank, "us");
    bench_result("comm_rank_thread", in_thread(comm_rank_loop), "us");
  }
  double latency = 0;
  ping_pong(&latency);
  if (rank == 0) bench_result("latency_rank", latency, "us");
  latency = in_thread(ping_pong);
  if (rank == 0) bench_result("latency_thread", latency, "us");
  MPI_Finalize();
  return 0;
}
