/* Mutual exclusion under heavy oversubscription: every thread of the team hammers a lock, the
 * unnamed and a named critical section, a nestable lock and omp_test_lock, each guarding a
 * counter updated with a read, a pause and a write (a lost update shows two holders at once)
 * and an occupancy count that must be 0 on entry. Holders also yield inside the section, so that
 * waiters of the holder's own core must let it run; one thread holds a lock for a long stretch
 * while the others queue, which drives the hand-off to long waiters. Run with 64 threads on one
 * virtual processor (WEFT_SCHEDULER_VPS=1) and on two. */
#include <omp.h>
#include <stdlib.h>

#include "omp_check.h"

enum { ROUNDS = 400 };

static volatile long sink;

static void pause_a_little(int n) {
  for (int i = 0; i < n; ++i) sink += i;
}

/* The guarded section: a lost update or a second thread inside counts as wrong. */
static void section(long* counter, int* inside, int* wrong, int round) {
  if (__atomic_fetch_add(inside, 1, __ATOMIC_RELAXED) != 0)
    __atomic_add_fetch(wrong, 1, __ATOMIC_RELAXED);
  const long value = *counter;
  pause_a_little(round % 7 * 10);
#pragma omp taskyield
  *counter = value + 1;
  __atomic_fetch_sub(inside, 1, __ATOMIC_RELAXED);
}

/* Takes `lock` once per level down to `depth` 0; `level` is how many times this task holds it. */
static void nested(omp_nest_lock_t* lock, long* counter, int* inside, int* wrong, int depth,
                   int level, int round) {
  omp_set_nest_lock(lock);
  if (depth == 0) {
    section(counter, inside, wrong, round);
  } else {
    nested(lock, counter, inside, wrong, depth - 1, level + 1, round);
  }
  check_equal(omp_test_nest_lock(lock), level + 1, "omp_test_nest_lock's depth when owned",
              __LINE__);
  omp_unset_nest_lock(lock);
  omp_unset_nest_lock(lock);
}

int main(void) {
  omp_lock_t lock;
  omp_nest_lock_t nest;
  omp_init_lock(&lock);
  omp_init_nest_lock(&nest);
  long locked = 0, critical = 0, named = 0, nested_count = 0, tested = 0;
  int in_lock = 0, in_critical = 0, in_named = 0, in_nest = 0, in_tested = 0, wrong = 0;
  int threads = 0;

#pragma omp parallel
  {
#pragma omp single
    threads = omp_get_num_threads();
    const int me = omp_get_thread_num();
    for (int round = 0; round < ROUNDS; ++round) {
      omp_set_lock(&lock);
      section(&locked, &in_lock, &wrong, round + me);
      omp_unset_lock(&lock);
#pragma omp critical
      section(&critical, &in_critical, &wrong, round + me);
#pragma omp critical(weft_named)
      section(&named, &in_named, &wrong, round + me);
      nested(&nest, &nested_count, &in_nest, &wrong, round % 3, 1, round + me);
      while (!omp_test_lock(&lock)) continue;
      section(&tested, &in_tested, &wrong, round + me);
      omp_unset_lock(&lock);
    }
    /* One long holder: the others park behind it, and keep queueing until they get a hand-off. */
#pragma omp barrier
    if (me == 0) {
      omp_set_lock(&lock);
      for (int i = 0; i < 2000; ++i) {
        pause_a_little(100);
#pragma omp taskyield
      }
      locked += 1;
      omp_unset_lock(&lock);
    } else {
      for (int round = 0; round < ROUNDS / 4; ++round) {
        omp_set_lock(&lock);
        section(&locked, &in_lock, &wrong, round);
        omp_unset_lock(&lock);
      }
    }
  }

  const long expected = (long)threads * ROUNDS;
  check_equal(wrong, 0, "threads found inside a section held by another", __LINE__);
  check_equal(locked, expected + 1 + (long)(threads - 1) * (ROUNDS / 4), "omp_set_lock counter",
              __LINE__);
  check_equal(critical, expected, "unnamed critical counter", __LINE__);
  check_equal(named, expected, "named critical counter", __LINE__);
  check_equal(nested_count, expected, "nestable lock counter", __LINE__);
  check_equal(tested, expected, "omp_test_lock counter", __LINE__);
  check_equal(omp_test_lock(&lock), 1, "omp_test_lock of a free lock", __LINE__);
  omp_unset_lock(&lock);
  omp_destroy_lock(&lock);
  omp_destroy_nest_lock(&nest);
  return omp_check_status("omp_locks");
}
