/* A thread that reaches the end of a region while a teammate sharing its core is still creating
 * tasks lets that teammate finish before taking its tasks (barrier.cpp): run with two threads on
 * one virtual processor (WEFT_SCHEDULER_VPS=1), where the order is fixed.
 *
 * Thread 1 queues a first batch of tasks, then yields the core (taskyield, which on weft only
 * yields) in the middle of its creating, as the scheduler's time slice can. Thread 0, which was
 * waiting for that first batch, goes to the region's end, where its teammate's tasks are queued.
 * It must let thread 1 run first: no task may start before thread 1 has created its last one. The
 * same check at an explicit barrier. */
#include <omp.h>
#include <stdio.h>

#include "omp_check.h"

enum { BATCH = 8 };

static int first_batch_queued;
static int creating_done;
static int early; /* tasks that started while their creator was still creating */
static int ran;

static void task_body(void) {
  if (!__atomic_load_n(&creating_done, __ATOMIC_ACQUIRE)) {
    __atomic_add_fetch(&early, 1, __ATOMIC_RELAXED);
  }
  __atomic_add_fetch(&ran, 1, __ATOMIC_RELAXED);
}

static void create_with_a_yield_between(void) {
  for (int i = 0; i < BATCH; ++i) {
#pragma omp task
    task_body();
  }
  __atomic_store_n(&first_batch_queued, 1, __ATOMIC_RELEASE);
#pragma omp taskyield
  for (int i = 0; i < BATCH; ++i) {
#pragma omp task
    task_body();
  }
  __atomic_store_n(&creating_done, 1, __ATOMIC_RELEASE);
}

static void wait_for_first_batch(void) {
  while (!__atomic_load_n(&first_batch_queued, __ATOMIC_ACQUIRE)) {
#pragma omp taskyield
  }
}

static void reset(void) {
  first_batch_queued = 0;
  creating_done = 0;
  early = 0;
  ran = 0;
}

int main(void) {
  int threads = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp single nowait
    threads = omp_get_num_threads();
    if (omp_get_thread_num() == 1) {
      create_with_a_yield_between();
    } else {
      wait_for_first_batch();
    }
  }
  check_equal(threads, 2, "threads in the team", __LINE__);
  check_equal(ran, 2 * BATCH, "tasks run by the region's end", __LINE__);
  check_equal(early, 0, "tasks started at the region's end before their creator finished",
              __LINE__);

  reset();
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) {
      create_with_a_yield_between();
    } else {
      wait_for_first_batch();
    }
#pragma omp barrier
    if (omp_get_thread_num() == 0) {
      check_equal(__atomic_load_n(&ran, __ATOMIC_RELAXED), 2 * BATCH, "tasks run by the barrier",
                  __LINE__);
    }
  }
  check_equal(early, 0, "tasks started at a barrier before their creator finished", __LINE__);
  return omp_check_status("omp_join_order");
}
