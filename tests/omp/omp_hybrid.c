/* MPI + OpenMP: every worker of every rank calls MPI. Thread t of each rank exchanges with the
 * same thread of the neighbouring ranks (tag t) and reduces over its own duplicate of
 * MPI_COMM_WORLD, many times; a worker blocked in MPI parks, so the other threads of its rank and
 * the other ranks sharing its core go on. */
#include <mpi.h>
#include <omp.h>
#include <stdlib.h>

#include "omp_check.h"

enum { MAX_THREADS = 64, ROUNDS = 20 };

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  check_equal(provided, MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided", __LINE__);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int threads = omp_get_max_threads();
  if (threads > MAX_THREADS) return 2;
  MPI_Comm comms[MAX_THREADS];
  for (int t = 0; t < threads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  long wrong = 0;
  int team = 0;
#pragma omp parallel reduction(+ : wrong)
  {
    const int t = omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
    int me = 0;
    MPI_Comm_rank(comms[t], &me);
    wrong += me != rank;
    for (int round = 0; round < ROUNDS; ++round) {
      const int out = rank * 1000 + t + round * 100000;
      int in = -1;
      MPI_Sendrecv(&out, 1, MPI_INT, right, t, &in, 1, MPI_INT, left, t, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      wrong += in != left * 1000 + t + round * 100000;
      int sum = 0;
      const int one = 1 + t;
      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comms[t]);
      wrong += sum != size * (1 + t);
    }
  }
  check_equal(team, threads, "team size", __LINE__);
  check_equal(wrong, 0, "messages and reductions of every worker", __LINE__);
  for (int t = 0; t < threads; ++t) MPI_Comm_free(&comms[t]);
  /* The hybrid benchmark's shape: a barrier of the team, then an Allreduce of the rank. */
  long total = 0;
  for (int step = 0; step < 50; ++step) {
    long local = 0;
#pragma omp parallel reduction(+ : local)
    local += 1;
    long global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    total += global;
  }
  check_equal(total, 50L * size * threads, "team counts summed over ranks", __LINE__);
  MPI_Finalize();
  return omp_check_status("omp_hybrid");
}
