/* EPCC-style OpenMP synchronisation benchmark, built three ways from this one source (weft's
 * weftcc -fopenmp, gcc with libgomp, clang-14 with libomp; bench/omp/run). For each construct
 * the overhead is the time of `inner` repetitions of the construct around a short delay, minus
 * the time of the delays alone, divided by `inner`; `inner` grows until a test lasts TARGET_US,
 * and the figure is the median of ROUNDS tests. Prints one line per construct:
 *
 *   <construct> <threads> <overhead in microseconds>
 *
 * The thread count comes from OMP_NUM_THREADS. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 15, TARGET_US = 4000, MAX_INNER = 1 << 20, DELAY = 60 };

static volatile double sink;

/* About 0.1 us of work that the compiler cannot remove. */
static void delay(void) {
  double a = 0;
  for (int i = 0; i < DELAY; ++i) a += i;
  sink += a;
}

typedef void (*test_fn)(int inner);

static double seconds(test_fn fn, int inner) {
  const double start = omp_get_wtime();
  fn(inner);
  return omp_get_wtime() - start;
}

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a;
  const double y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Median over ROUNDS of the time per inner repetition, in microseconds. */
static double per_repetition(test_fn fn) {
  int inner = 1;
  while (inner < MAX_INNER && seconds(fn, inner) * 1e6 < TARGET_US) inner *= 2;
  double times[ROUNDS];
  for (int r = 0; r < ROUNDS; ++r) times[r] = seconds(fn, inner) * 1e6 / inner;
  qsort(times, ROUNDS, sizeof times[0], compare);
  return times[ROUNDS / 2];
}

static void reference(int inner) {
  for (int j = 0; j < inner; ++j) delay();
}

static void test_parallel(int inner) {
  for (int j = 0; j < inner; ++j) {
#pragma omp parallel
    delay();
  }
}

static void test_for(int inner) {
#pragma omp parallel
  for (int j = 0; j < inner; ++j) {
#pragma omp for schedule(static)
    for (int i = 0; i < omp_get_num_threads(); ++i) delay();
  }
}

static void test_for_dynamic(int inner) {
#pragma omp parallel
  for (int j = 0; j < inner; ++j) {
#pragma omp for schedule(dynamic)
    for (int i = 0; i < omp_get_num_threads(); ++i) delay();
  }
}

static void test_parallel_for(int inner) {
  const int threads = omp_get_max_threads();
  for (int j = 0; j < inner; ++j) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < threads; ++i) delay();
  }
}

static void test_barrier(int inner) {
#pragma omp parallel
  for (int j = 0; j < inner; ++j) {
    delay();
#pragma omp barrier
  }
}

static void test_single(int inner) {
#pragma omp parallel
  for (int j = 0; j < inner; ++j) {
#pragma omp single
    delay();
  }
}

/* Each thread enters inner / threads times, so that the construct runs `inner` times in all. */
static void test_critical(int inner) {
#pragma omp parallel
  for (int j = 0; j < inner / omp_get_num_threads(); ++j) {
#pragma omp critical
    delay();
  }
}

static omp_lock_t lock;

static void test_lock(int inner) {
#pragma omp parallel
  for (int j = 0; j < inner / omp_get_num_threads(); ++j) {
    omp_set_lock(&lock);
    delay();
    omp_unset_lock(&lock);
  }
}

static double shared_value;

static void test_atomic(int inner) {
#pragma omp parallel
  for (int j = 0; j < inner / omp_get_num_threads(); ++j) {
    delay();
#pragma omp atomic
    shared_value += 1.0;
  }
}

static void test_reduction(int inner) {
  for (int j = 0; j < inner; ++j) {
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
      delay();
      total += 1;
    }
    sink += total;
  }
}

/* Every thread spawns its share of `inner` tasks, then waits for them. */
static void test_task(int inner) {
#pragma omp parallel
  {
    for (int j = 0; j < inner / omp_get_num_threads(); ++j) {
#pragma omp task
      delay();
    }
#pragma omp taskwait
  }
}

struct construct {
  const char* name;
  test_fn fn;
  /* Whether the test's `inner` delays are spread over the team and run side by side (tasks):
   * its reference is then a thread's share of them. Elsewhere each repetition costs one delay of
   * time, on every thread at once or one thread at a time (critical, lock, atomic). */
  int spread;
};

int main(int argc, char** argv) {
  const struct construct constructs[] = {
      {"PARALLEL", test_parallel, 0},       {"FOR", test_for, 0},
      {"FOR_DYNAMIC", test_for_dynamic, 0}, {"PARALLEL_FOR", test_parallel_for, 0},
      {"BARRIER", test_barrier, 0},         {"SINGLE", test_single, 0},
      {"CRITICAL", test_critical, 0},       {"LOCK_UNLOCK", test_lock, 0},
      {"ATOMIC", test_atomic, 0},           {"REDUCTION", test_reduction, 0},
      {"TASK", test_task, 1},
  };
  const int threads = omp_get_max_threads();
  omp_init_lock(&lock);
  /* Wake the team once so that the first construct does not pay for creating it. */
#pragma omp parallel
  delay();
  const double ref = per_repetition(reference);
  for (size_t c = 0; c < sizeof constructs / sizeof constructs[0]; ++c) {
    if (argc > 1 && strcmp(argv[1], constructs[c].name) != 0) continue;
    const double time = per_repetition(constructs[c].fn);
    const double overhead = time - (constructs[c].spread ? ref / threads : ref);
    printf("%s %d %.4f\n", constructs[c].name, threads, overhead);
    fflush(stdout);
  }
  omp_destroy_lock(&lock);
  return 0;
}
