/* What one explicit task costs the runtime, for counting instructions (bench/omp/run runs it under
 * callgrind at two task counts; the difference over the difference of the counts is the cost of
 * one task, start-up left out). Built like syncbench.c: by GCC on weft and on libgomp, by clang 14
 * on weft and on libomp.
 *
 *   taskcost <mode> <tasks per thread>
 *
 * Every thread of the team (OMP_NUM_THREADS) creates its tasks, whose body only counts:
 *   inline    all of them, then one taskwait: syncbench's TASK. Past the runtimes' throttle (a
 *             number of unfinished tasks per thread) most run at once in their creator.
 *   deferred  in batches of 16, a taskwait after each: every task is queued, then run by the
 *             thread's taskwait (or by a teammate).
 *   group     the same batches inside a taskgroup instead of a taskwait.
 *   if0       undeferred tasks (if(0)): each runs at once in its creator.
 *   regions   syncbench's TASK as it runs: regions in which every thread creates 160 tasks, then
 *             waits, as many as make the count. Unlike `inline`, whose first tasks (those queued
 *             before the throttle) are the same at both counts and cancel out, the queueing that
 *             starts every region is counted.
 * Prints the number of tasks run, which must be threads x tasks per thread. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 16, REGION = 160 };

static int ran;

static void body(void) {
#pragma omp atomic
  ran += 1;
}

static void run_inline(int n) {
#pragma omp parallel
  {
    for (int i = 0; i < n; ++i) {
#pragma omp task
      body();
    }
#pragma omp taskwait
  }
}

static void run_deferred(int n) {
#pragma omp parallel
  for (int i = 0; i < n; i += BATCH) {
    for (int j = 0; j < BATCH; ++j) {
#pragma omp task
      body();
    }
#pragma omp taskwait
  }
}

static void run_group(int n) {
#pragma omp parallel
  for (int i = 0; i < n; i += BATCH) {
#pragma omp taskgroup
    for (int j = 0; j < BATCH; ++j) {
#pragma omp task
      body();
    }
  }
}

static void run_regions(int n) {
  for (int r = 0; r < n / REGION; ++r) {
#pragma omp parallel
    {
      for (int i = 0; i < REGION; ++i) {
#pragma omp task
        body();
      }
#pragma omp taskwait
    }
  }
}

static void run_if0(int n) {
#pragma omp parallel
  for (int i = 0; i < n; ++i) {
#pragma omp task if (0)
    body();
  }
}

int main(int argc, char** argv) {
  if (argc != 3 || atoi(argv[2]) <= 0 || atoi(argv[2]) % BATCH != 0) {
    fprintf(
        stderr,
        "usage: taskcost inline|deferred|group|if0|regions <tasks per thread, a multiple of %d>\n",
        BATCH);
    return 2;
  }
  const int n = atoi(argv[2]);
  if (strcmp(argv[1], "inline") == 0) {
    run_inline(n);
  } else if (strcmp(argv[1], "deferred") == 0) {
    run_deferred(n);
  } else if (strcmp(argv[1], "group") == 0) {
    run_group(n);
  } else if (strcmp(argv[1], "if0") == 0) {
    run_if0(n);
  } else if (strcmp(argv[1], "regions") == 0 && n % REGION == 0) {
    run_regions(n);
  } else {
    fprintf(stderr, "taskcost: unknown mode %s (regions: tasks per thread a multiple of %d)\n",
            argv[1], REGION);
    return 2;
  }
  const int expected = n * omp_get_max_threads();
  printf("%d tasks\n", ran);
  return ran == expected ? 0 : 1;
}
