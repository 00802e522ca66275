/* A hybrid MPI + OpenMP program: each rank sums its share of a series with an OpenMP team, every
 * thread of every rank then exchanges a message with the same thread of the next rank, and the
 * ranks add up their sums. Build and run it as a user would:
 *
 *   build/bin/weftcc -fopenmp -O2 -o hybrid examples/hybrid.c
 *   OMP_NUM_THREADS=4 build/bin/weftrun -n 8 -c 4 ./hybrid   # 8 ranks x 4 workers on their cores
 *   ./hybrid                                                 # 1 rank, OpenMP over the node
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

enum { TERMS = 1000000 };

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* The rank's share of 1 + 2 + ... + TERMS, over its OpenMP team. */
  long sum = 0;
  int threads = 0;
#pragma omp parallel reduction(+ : sum)
  {
#pragma omp single
    threads = omp_get_num_threads();
#pragma omp for schedule(static)
    for (long i = 1 + rank; i <= TERMS; i += size) sum += i;
  }

  /* Every thread calls MPI: thread t passes a token to thread t of the next rank. */
  long tokens_ok = 0;
#pragma omp parallel num_threads(threads) reduction(+ : tokens_ok)
  {
    const int t = omp_get_thread_num();
    const int out = rank * 100 + t;
    int in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, t, &in, 1, MPI_INT, (rank + size - 1) % size,
                 t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    tokens_ok += in == ((rank + size - 1) % size) * 100 + t;
  }

  long total = 0;
  MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  printf("rank %d: %d OpenMP threads, %ld of %d tokens right\n", rank, threads, tokens_ok, threads);
  if (rank == 0) {
    const long expected = (long)TERMS * (TERMS + 1) / 2;
    printf("sum %ld (expected %ld) from %d ranks\n", total, expected, size);
  }
  MPI_Finalize();
  return tokens_ok == threads && (rank != 0 || total == (long)TERMS * (TERMS + 1) / 2) ? 0 : 1;
}
