/* Reactivity between processes while the cores compute: half the round trip of an 8-byte ping-pong
 * between world rank 0 and rank size/2 (the first rank of the second process under
 * `weftrun -p 2`), while every other rank computes in slices of about kSliceUs and tests, after
 * each, for the message that ends the run (a computation that reaches MPI now and then, as
 * application loops do). With 2 ranks nobody computes: the unloaded figure.
 *
 *   reactivity [seconds]
 *
 * Prints `RESULT reactivity_8B <microseconds> us`; run it at 2 ranks and at more, beside each
 * other (bench/mpi/ucx_run does, with the loaded/unloaded ratio). */
#include <time.h>

#include "bench_mpi.h"

enum { kSliceUs = 20, kStopTag = 77 };

struct pingpong {
  MPI_Comm pair;
  int rank; /* in `pair` */
  char byte[8];
};

static void round_trip(void* context) {
  struct pingpong* p = context;
  if (p->rank == 0) {
    MPI_Send(p->byte, 8, MPI_BYTE, 1, 0, p->pair);
    MPI_Recv(p->byte, 8, MPI_BYTE, 1, 0, p->pair, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(p->byte, 8, MPI_BYTE, 0, 0, p->pair, MPI_STATUS_IGNORE);
    MPI_Send(p->byte, 8, MPI_BYTE, 0, 0, p->pair);
  }
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Arithmetic on registers for about kSliceUs; the sum keeps the compiler from removing it. */
static double compute_slice(double seed) {
  const double end = now_us() + kSliceUs;
  double x = seed;
  while (now_us() < end) {
    for (int i = 0; i < 256; ++i) x = x * 1.0000001 + 0.5;
  }
  return x;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) bench_fail("reactivity needs at least 2 ranks", rank);
  const double seconds = bench_seconds(argc, argv);
  const int partner = size / 2;
  const int pinger = rank == 0 || rank == partner;
  struct pingpong p = {MPI_COMM_NULL, 0, {0}};
  MPI_Comm_split(MPI_COMM_WORLD, pinger ? 0 : 1, rank, &p.pair);
  MPI_Comm_rank(p.pair, &p.rank);
  if (pinger) {
    const double round_trip_seconds = bench_measure(p.pair, round_trip, &p, seconds);
    if (rank == 0) {
      int stop = 1;
      for (int r = 1; r < size; ++r) {
        if (r != partner) MPI_Send(&stop, 1, MPI_INT, r, kStopTag, MPI_COMM_WORLD);
      }
      bench_result("reactivity_8B", round_trip_seconds / 2.0 * 1e6, "us");
    }
  } else {
    int stop = 0;
    int done = 0;
    MPI_Request request;
    MPI_Irecv(&stop, 1, MPI_INT, 0, kStopTag, MPI_COMM_WORLD, &request);
    double x = (double)rank;
    while (!done) {
      x = compute_slice(x);
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
    if (x == 0.0) bench_fail("the computation vanished", rank);
  }
  MPI_Comm_free(&p.pair);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
