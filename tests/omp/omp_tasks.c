/* Tasks: deferred tasks from a single producer, taskwait (children only), taskgroup (all
 * descendants), dependences producing a known order (also through depobj objects), undeferred
 * (if(0)), final and mergeable
 * tasks, priorities, taskloop (grainsize, num_tasks, nogroup), taskyield and taskwait with
 * dependences (cancellation is in omp_cancellation.c), and weft's throttle: a thread never has
 * more than 64 of its tasks waiting, the next ones run at once. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "omp_check.h"

static long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  long b = 0;
#pragma omp task shared(a) final(n < 12) mergeable
  a = fib(n - 1);
#pragma omp task shared(b) final(n < 12)
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

static void recursion(void) {
  long result = 0;
#pragma omp parallel
#pragma omp single
  result = fib(22);
  check_equal(result, 17711, "fib(22) with nested tasks and taskwait", __LINE__);
}

static void producer(void) {
  int done[500] = {0};
#pragma omp parallel
  {
#pragma omp single
    {
      for (int i = 0; i < 500; ++i) {
#pragma omp task firstprivate(i)
        done[i] += 1;
      }
    }
    /* The barrier at the end of single completes every task. */
  }
  long wrong = 0;
  for (int i = 0; i < 500; ++i) wrong += done[i] != 1;
  check_equal(wrong, 0, "every task of a single producer runs once", __LINE__);
}

/* Tasks chained by dependences on one variable must run in creation order; readers between two
 * writers see the first writer's value. */
static void dependences(void) {
  int log[64];
  int logged = 0;
  int value = 0;
  long readers_wrong = 0;
#pragma omp parallel
#pragma omp single
  {
    for (int step = 0; step < 8; ++step) {
#pragma omp task depend(inout : value) shared(log, logged, value) firstprivate(step)
      {
        value = step + 1;
        int at;
#pragma omp atomic capture
        at = logged++;
        log[at] = step;
      }
      for (int r = 0; r < 3; ++r) {
#pragma omp task depend(in : value) shared(value, readers_wrong) firstprivate(step)
        {
          if (value != step + 1) {
#pragma omp atomic
            readers_wrong++;
          }
        }
      }
    }
#pragma omp taskwait
  }
  check_equal(logged, 8, "writers ran", __LINE__);
  for (int i = 0; i < logged; ++i) check_equal(log[i], i, "writers in creation order", __LINE__);
  check_equal(readers_wrong, 0, "readers see the writer before them", __LINE__);

  /* A diamond a -> (b, c) -> d. */
  int a = 0;
  int b = 0;
  int c = 0;
  int d = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task depend(out : a) shared(a)
    a = 1;
#pragma omp task depend(in : a) depend(out : b) shared(a, b)
    b = a + 1;
#pragma omp task depend(in : a) depend(out : c) shared(a, c)
    c = a + 2;
#pragma omp task depend(in : b, c) shared(b, c, d)
    d = b * 10 + c;
  }
  check_equal(d, 23, "diamond of dependences", __LINE__);

  /* An undeferred task waits for its predecessors. */
  int x = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task depend(out : x) shared(x)
    x = 5;
#pragma omp task depend(in : x) shared(x) if (0)
    x *= 2;
  }
  check_equal(x, 10, "undeferred task after its dependence", __LINE__);
}

/* The same order through omp_depend_t objects: writers in creation order, each reader after the
 * writer before it. */
static void depobj_dependences(void) {
  int log[8];
  int logged = 0;
  int value = 0;
  long readers_wrong = 0;
#pragma omp parallel
#pragma omp single
  {
    omp_depend_t writer;
    omp_depend_t reader;
#pragma omp depobj(writer) depend(inout : value)
#pragma omp depobj(reader) depend(in : value)
    for (int step = 0; step < 8; ++step) {
#pragma omp task depend(depobj : writer) shared(log, logged, value) firstprivate(step)
      {
        value = step + 1;
        log[logged++] = step;
      }
#pragma omp task depend(depobj : reader) shared(value, readers_wrong) firstprivate(step)
      {
        if (value != step + 1) {
#pragma omp atomic
          readers_wrong++;
        }
      }
    }
#pragma omp taskwait
#pragma omp depobj(writer) destroy
#pragma omp depobj(reader) destroy
  }
  check_equal(logged, 8, "depobj writers ran", __LINE__);
  for (int i = 0; i < logged; ++i) check_equal(log[i], i, "depobj writers in order", __LINE__);
  check_equal(readers_wrong, 0, "depobj readers see the writer before them", __LINE__);
}

static void groups_and_waits(void) {
  int grandchildren = 0;
  int children_done_at_taskwait = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp taskgroup
    {
      for (int i = 0; i < 10; ++i) {
#pragma omp task shared(grandchildren)
        {
#pragma omp task shared(grandchildren)
          {
#pragma omp atomic
            grandchildren++;
          }
        }
      }
    }
    check_equal(grandchildren, 10, "taskgroup waits for descendants", __LINE__);
    int children = 0;
    for (int i = 0; i < 10; ++i) {
#pragma omp task shared(children)
      {
#pragma omp atomic
        children++;
      }
    }
#pragma omp taskwait
    children_done_at_taskwait = children;
  }
  check_equal(children_done_at_taskwait, 10, "taskwait waits for children", __LINE__);

  int in_final = 0;
#pragma omp parallel
#pragma omp single
#pragma omp task final(1) shared(in_final)
  {
#pragma omp task shared(in_final)
    in_final = omp_in_final();
  }
  check_equal(in_final, 1, "a task inside a final task is final", __LINE__);
}

/* Tasks run at once by their creator (if(0), and every thread spawning far more than the queue
 * holds, which runs the surplus at once) are not counted anywhere, but the deferred children they
 * create are: taskgroup and taskwait must still wait for those, and every task runs once. */
static void undeferred_with_children(void) {
  enum { SPAWNS = 3000 };
  long wrong_groups = 0, wrong_taskwaits = 0, spawned = 0, threads = 0;
#pragma omp parallel reduction(+ : wrong_groups, wrong_taskwaits)
  {
#pragma omp single
    threads = omp_get_num_threads();
    long group_children = 0;
#pragma omp taskgroup
    {
#pragma omp task if (0) shared(group_children)
      for (int i = 0; i < 4; ++i) {
#pragma omp task shared(group_children)
        {
#pragma omp atomic
          group_children++;
        }
      }
    }
    wrong_groups += __atomic_load_n(&group_children, __ATOMIC_RELAXED) != 4;
    long children = 0;
    for (int i = 0; i < SPAWNS; ++i) {
#pragma omp task shared(children, spawned)
      {
#pragma omp task shared(spawned)
        {
#pragma omp atomic
          spawned++;
        }
#pragma omp atomic
        children++;
      }
    }
#pragma omp taskwait
    wrong_taskwaits += __atomic_load_n(&children, __ATOMIC_RELAXED) != SPAWNS;
  }
  check_equal(wrong_groups, 0, "threads whose taskgroup ended before an if(0) task's children",
              __LINE__);
  check_equal(wrong_taskwaits, 0, "threads whose taskwait ended before their children", __LINE__);
  check_equal(spawned, SPAWNS * threads, "every grandchild ran by the region's end", __LINE__);
}

static void taskloops(void) {
  int hits[1000];
  memset(hits, 0, sizeof hits);
#pragma omp parallel
#pragma omp single
  {
#pragma omp taskloop grainsize(7)
    for (int i = 0; i < 1000; ++i) hits[i]++;
#pragma omp taskloop num_tasks(13)
    for (int i = 0; i < 1000; i += 2) hits[i]++;
#pragma omp taskloop nogroup priority(1)
    for (long i = 999; i >= 0; i -= 3) hits[i]++;
#pragma omp taskwait
  }
  long wrong = 0;
  for (int i = 0; i < 1000; ++i) {
    const int expected = 1 + (i % 2 == 0) + ((999 - i) % 3 == 0);
    wrong += hits[i] != expected;
  }
  check_equal(wrong, 0, "taskloop iterations each run once", __LINE__);

  long yields = 0;
#pragma omp parallel reduction(+ : yields)
  {
#pragma omp taskyield
    yields++;
  }
  check_equal(yields, omp_get_max_threads(), "taskyield returns", __LINE__);
}

/* taskwait depend(...) waits for the named predecessors only: a child it does not name, a
 * detached task whose event the waiting task fulfills after the wait, would hold a taskwait that
 * waited for every child forever. In a team of one weft runs each task as it is created, a
 * detached one until its event, so the wait is checked in larger teams. */
static void taskwait_with_dependences(void) {
  int written = 0;
  int read = 0;
  int detached_ran = 0;
  int team = 0;
#pragma omp parallel shared(written, read, detached_ran, team)
#pragma omp single
  {
    team = omp_get_num_threads();
    if (team > 1) {
      omp_event_handle_t event;
      /* Not empty: GCC drops an empty task, detach clause and all. */
#pragma omp task detach(event) shared(detached_ran)
      __atomic_store_n(&detached_ran, 1, __ATOMIC_RELAXED);
#pragma omp task depend(out : written) shared(written)
      __atomic_store_n(&written, 1, __ATOMIC_RELAXED);
#pragma omp taskwait depend(in : written)
      check_equal(__atomic_load_n(&written, __ATOMIC_RELAXED), 1,
                  "the out task before taskwait depend(in)", __LINE__);
      for (int r = 0; r < 3; ++r) {
#pragma omp task depend(in : written) shared(written, read)
        __atomic_add_fetch(&read, __atomic_load_n(&written, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
      }
#pragma omp taskwait depend(inout : written)
      check_equal(__atomic_load_n(&read, __ATOMIC_RELAXED), 3,
                  "the in tasks before taskwait depend(inout)", __LINE__);
      omp_fulfill_event(event);
    }
  }
  check_equal(team, omp_get_max_threads(), "team size", __LINE__);
  check_equal(detached_ran, team > 1, "the detached task's body", __LINE__);
}

/* A thread creating many tasks leaves at most 64 of them unstarted when its loop ends (weft runs a
 * new task at once while 64 of its creator's are unfinished: what its cache of task blocks holds),
 * whatever the team's size; before, the bound was 64 per thread of the team, for the first thread
 * alone. */
static void throttle(void) {
  enum { kTasks = 4000, kMostWaiting = 64 };
  int created_all = 0;
  int started_late = 0;
  int ran = 0;
#pragma omp parallel
#pragma omp single
  {
    for (int i = 0; i < kTasks; ++i) {
#pragma omp task shared(created_all, started_late, ran)
      {
        if (__atomic_load_n(&created_all, __ATOMIC_ACQUIRE))
          __atomic_add_fetch(&started_late, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&ran, 1, __ATOMIC_RELAXED);
      }
    }
    __atomic_store_n(&created_all, 1, __ATOMIC_RELEASE);
  }
  check_equal(ran, kTasks, "throttled tasks ran", __LINE__);
  /* The number of tasks found unstarted, when more than 64. */
  check_equal(started_late > kMostWaiting ? started_late : 0, 0,
              "more than 64 of a thread's tasks waiting", __LINE__);
}

int main(void) {
  throttle();
  recursion();
  producer();
  dependences();
  depobj_dependences();
  groups_and_waits();
  undeferred_with_children();
  taskloops();
  taskwait_with_dependences();
  return omp_check_status("omp_tasks");
}
