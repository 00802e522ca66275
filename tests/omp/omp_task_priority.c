/* Task priorities, run with OMP_MAX_TASK_PRIORITY=10 (omp.task_priority.*). Thread 0 queues tasks
 * of mixed priorities while its teammates are held away from the queue, then runs them itself in
 * a taskwait: the team's queue hands out the highest priority first, FIFO within one, with
 * priorities above max-task-priority clamped to it (docs/omp_bridge.md, Tasks). In a team of one
 * every task runs undeferred as it is created, so only the completion of all is checked there. */
#include <omp.h>

#include "omp_check.h"

enum { kMaxPriority = 10, kTasks = 12 };

/* 50 is clamped to 10, so it runs after the 10 created before it; unclamped it would be first. */
static const int kPriorities[kTasks] = {0, 10, 3, 50, 7, 0, 10, 3, 9, 1, 7, 2};
/* The creation indices in the order the priorities above must run. */
static const int kExpectedOrder[kTasks] = {1, 3, 6, 8, 4, 10, 2, 7, 11, 9, 0, 5};

static void ordered_by_priority(void) {
  int order[kTasks];
  int next = 0;
  int held = 1;
  int team = 0;
#pragma omp parallel shared(order, next, held, team)
  {
    if (omp_get_thread_num() == 0) {
      team = omp_get_num_threads();
      for (int i = 0; i < kTasks; ++i) {
#pragma omp task firstprivate(i) shared(order, next) priority(kPriorities[i])
        order[__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED)] = i;
      }
      /* The other threads take no task before this: only thread 0 runs them, one at a time. */
#pragma omp taskwait
      __atomic_store_n(&held, 0, __ATOMIC_RELEASE);
    } else {
      /* taskyield runs no task here (weft yields the thread), so the queue stays untouched. */
      while (__atomic_load_n(&held, __ATOMIC_ACQUIRE)) {
#pragma omp taskyield
      }
    }
  }
  check_equal(next, kTasks, "every prioritized task ran once", __LINE__);
  if (team < 2) return;
  for (int i = 0; i < kTasks; ++i) {
    check_equal(order[i], kExpectedOrder[i], "creation index of the i-th task to run", __LINE__);
  }
}

int main(void) {
  check_equal(omp_get_max_task_priority(), kMaxPriority,
              "omp_get_max_task_priority() under OMP_MAX_TASK_PRIORITY=10", __LINE__);
  ordered_by_priority();
  return omp_check_status("omp_task_priority");
}
