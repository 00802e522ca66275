/* threadprivate and copyin with more threads than cores: each OpenMP thread must see its own
 * instance of a threadprivate variable (GCC makes it a __thread variable) even when several
 * threads share a core or move between cores, across barriers, yields and regions. Run with
 * WEFT_SCHEDULER_VPS=1 and OMP_NUM_THREADS well above it, so that every thread of the team
 * shares one kernel thread. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#include "omp_check.h"

enum { MAX_THREADS = 64, ROUNDS = 20 };

static int counter;
#pragma omp threadprivate(counter)

/* An initialized one (its value comes from the module's TLS image) and a large zeroed one. */
static long initialized = 7;
#pragma omp threadprivate(initialized)

static int history[256];
#pragma omp threadprivate(history)

static int expected_threads(void) {
  const char* text = getenv("OMP_NUM_THREADS");
  return text != NULL ? atoi(text) : omp_get_num_procs();
}

/* Each thread writes its number and finds it again after barriers and yields, by which time
 * every other thread of the team wrote its own. */
static void own_instance_across_waits(void) {
#pragma omp parallel
  {
    const int me = omp_get_thread_num();
    check_equal(initialized, 7, "initial value of an initialized threadprivate", __LINE__);
    for (int round = 0; round < ROUNDS; ++round) {
      counter = me * 1000 + round;
      history[round] = me + round;
#pragma omp barrier
#pragma omp taskyield
      check_equal(counter, me * 1000 + round, "threadprivate after a barrier", __LINE__);
#pragma omp barrier
      check_equal(history[round], me + round, "threadprivate array after a barrier", __LINE__);
    }
  }
}

/* Distinct addresses: GCC's copyin compares a thread's address with the master's to decide
 * whether to copy, and a program may pass &counter around. */
static void distinct_addresses(int threads) {
  uintptr_t address[MAX_THREADS] = {0};
#pragma omp parallel
  address[omp_get_thread_num()] = (uintptr_t)&counter;
  for (int a = 0; a < threads && a < MAX_THREADS; ++a) {
    for (int b = a + 1; b < threads && b < MAX_THREADS; ++b) {
      check_equal(address[a] != address[b], 1, "threads' instances at distinct addresses",
                  __LINE__);
    }
  }
}

static void copyin_from_master(void) {
  counter = 4242;
  initialized = -3;
#pragma omp parallel copyin(counter, initialized)
  {
    check_equal(counter, 4242, "copyin of the master's value", __LINE__);
    check_equal(initialized, -3, "copyin of a second variable", __LINE__);
    counter = omp_get_thread_num();
#pragma omp barrier
#pragma omp taskyield
    check_equal(counter, omp_get_thread_num(), "own value after copyin", __LINE__);
  }
  check_equal(counter, 0, "the master's instance after the region", __LINE__);
}

/* Values persist between two regions of the same team size (no nesting, dyn-var false). */
static void persistence_across_regions(void) {
#pragma omp parallel
  counter = 100 + omp_get_thread_num();
#pragma omp parallel
  check_equal(counter, 100 + omp_get_thread_num(), "value kept from the previous region", __LINE__);
}

/* copyprivate of a threadprivate: the single thread's value reaches every instance. */
static void copyprivate_broadcast(void) {
#pragma omp parallel
  {
#pragma omp single copyprivate(counter)
    counter = 99;
#pragma omp taskyield
    check_equal(counter, 99, "copyprivate into every thread's instance", __LINE__);
  }
}

/* Explicit tasks run by any thread of the team use that thread's instance. */
static void tasks_see_their_thread(void) {
#pragma omp parallel
  {
    counter = omp_get_thread_num();
#pragma omp barrier
#pragma omp single
    for (int t = 0; t < 64; ++t) {
#pragma omp task
      check_equal(counter, omp_get_thread_num(), "a task sees its thread's instance", __LINE__);
    }
    check_equal(counter, omp_get_thread_num(), "own value after running tasks", __LINE__);
  }
}

int main(void) {
  const int threads = expected_threads();
  own_instance_across_waits();
  distinct_addresses(threads);
  copyin_from_master();
  persistence_across_regions();
  copyprivate_broadcast();
  tasks_see_their_thread();
  return omp_check_status("omp_threadprivate");
}
