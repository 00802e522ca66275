/* What every MPI benchmark program of bench/mpi shares: a time-bounded measurement loop and the
 * RESULT lines that bench/mpi/run reads.
 *
 * The same sources are compiled with Open MPI's mpicc and with weft's weftcc, so this is plain C
 * using only MPI calls both implement. Every rank of the communicator takes part in every
 * measurement, and each decision (how many iterations, when to stop) is derived from values all
 * ranks agree on, so collectives inside a measurement stay matched. */
#ifndef WEFT_BENCH_MPI_H
#define WEFT_BENCH_MPI_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One iteration of the operation measured, on the calling rank. */
typedef void (*bench_op)(void* context);

/* Seconds given to each measurement: the first argument of the program, else this. */
static inline double bench_seconds(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.0;
  return seconds > 0.0 ? seconds : 0.3;
}

/* Runs `iterations` iterations between a barrier and a clock reading; returns the slowest rank's
 * elapsed time, the same value on every rank. */
static inline double bench_time_batch(MPI_Comm comm, bench_op op, void* context, long iterations) {
  MPI_Barrier(comm);
  double start = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) op(context);
  double elapsed = MPI_Wtime() - start;
  double slowest = 0.0;
  MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

static inline int bench_compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a;
  double y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Seconds per iteration of `op`: the median over repeated batches. The batch size is calibrated
 * first (which also warms caches, connections and eager buffers up) so that a batch takes about a
 * tenth of `seconds`; then batches run until `seconds` are spent, at least 3 and at most 15 of
 * them. A median, not a mean: one batch preempted on a shared machine must not move the figure. */
static inline double bench_measure(MPI_Comm comm, bench_op op, void* context, double seconds) {
  enum { kMinBatches = 3, kMaxBatches = 15 };
  const double batch_seconds = seconds / 10.0;
  long iterations = 1;
  for (;;) {
    double elapsed = bench_time_batch(comm, op, context, iterations);
    if (elapsed >= batch_seconds || iterations >= (1L << 30)) break;
    double factor = elapsed > 0.0 ? 1.2 * batch_seconds / elapsed : 8.0;
    if (factor > 8.0) factor = 8.0;
    if (factor < 2.0) factor = 2.0;
    iterations = (long)((double)iterations * factor);
  }
  double per_iteration[kMaxBatches];
  int batches = 0;
  double spent = 0.0;
  while (batches < kMaxBatches && (batches < kMinBatches || spent < seconds)) {
    double elapsed = bench_time_batch(comm, op, context, iterations);
    per_iteration[batches++] = elapsed / (double)iterations;
    spent += elapsed;
  }
  qsort(per_iteration, (size_t)batches, sizeof per_iteration[0], bench_compare_doubles);
  return per_iteration[batches / 2];
}

/* "8B", "64KiB", "4MiB": the size as metric names spell it. */
static inline void bench_size_name(char* name, size_t capacity, long bytes) {
  if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) {
    snprintf(name, capacity, "%ldMiB", bytes >> 20);
  } else if (bytes >= 1024 && bytes % 1024 == 0) {
    snprintf(name, capacity, "%ldKiB", bytes >> 10);
  } else {
    snprintf(name, capacity, "%ldB", bytes);
  }
}

/* The line bench/mpi/run collects: `RESULT <metric> <value> <unit>`. */
static inline void bench_result(const char* metric, double value, const char* unit) {
  printf("RESULT %s %.6g %s\n", metric, value, unit);
  fflush(stdout);
}

/* A wrong answer means the figures around it cannot be trusted: say which, and fail the run. */
static inline void bench_fail(const char* what, int rank) {
  fprintf(stderr, "ERROR rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A buffer of `bytes` bytes, each set to `value`; the program ends when memory runs out. */
static inline char* bench_buffer(long bytes, int value) {
  char* buffer = malloc((size_t)(bytes > 0 ? bytes : 1));
  if (buffer == NULL) {
    fprintf(stderr, "ERROR: cannot allocate %ld bytes\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(buffer, value, (size_t)bytes);
  return buffer;
}

#endif
