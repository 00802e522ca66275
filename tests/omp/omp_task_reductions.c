/* Task reductions (task_reduction and in_reduction on taskgroups, reduction(task, ...) on
 * parallel, for, sections and scope, reductions on taskloop) and the detach clause, with result
 * checks. Each reduction's expected value is computed in closed form. */
#include <omp.h>
#include <stdlib.h>

#include "omp_check.h"

enum { TASKS = 100 };

static long triangle(long n) { /* 0 + 1 + ... + (n - 1) */
  return n * (n - 1) / 2;
}

static int expected_threads(void) {
  const char* text = getenv("OMP_NUM_THREADS");
  return text != NULL ? atoi(text) : omp_get_num_procs();
}

/* Tasks of one taskgroup contribute to three variables of different types and operators, and to
 * an array section. */
static void taskgroup_reductions(void) {
  long sum = 5;
  double product = 1.0;
  int biggest = -1;
  long histogram[4] = {0, 0, 0, 0};
#pragma omp parallel
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+ : sum) task_reduction(* : product) \
    task_reduction(max : biggest) task_reduction(+ : histogram[0:4])
    for (int i = 0; i < TASKS; ++i) {
#pragma omp task in_reduction(+ : sum) in_reduction(* : product) in_reduction(max : biggest) \
    in_reduction(+ : histogram[0:4])
      {
        sum += i;
        if (i < 10) product *= 2.0;
        if (i > biggest) biggest = i;
        histogram[i % 4] += 1;
      }
    }
  }
  check_equal(sum, 5 + triangle(TASKS), "task_reduction(+) over a taskgroup", __LINE__);
  check_equal((long)product, 1024, "task_reduction(*) over a taskgroup", __LINE__);
  check_equal(biggest, TASKS - 1, "task_reduction(max) over a taskgroup", __LINE__);
  for (int b = 0; b < 4; ++b) {
    check_equal(histogram[b], TASKS / 4, "task_reduction(+) of an array section", __LINE__);
  }
}

/* A task of an inner taskgroup contributes to the outer taskgroup's reduction (the runtime finds
 * the variable through the inner group's chain), and nested tasks remap an already remapped
 * address. */
static void nested_taskgroups(void) {
  long outer = 0;
  long inner = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup task_reduction(+ : outer)
  {
    for (int i = 0; i < 10; ++i) {
#pragma omp task in_reduction(+ : outer)
      {
        outer += 1;
#pragma omp taskgroup task_reduction(+ : inner)
        for (int j = 0; j < 10; ++j) {
#pragma omp task in_reduction(+ : outer, inner)
          {
            outer += 10;
            inner += 1;
#pragma omp task in_reduction(+ : outer)
            outer += 100;
          }
        }
      }
    }
  }
  check_equal(outer, 10 * (1 + 10 * (10 + 100)), "in_reduction across nested taskgroups", __LINE__);
  check_equal(inner, 100, "the inner taskgroups' reductions", __LINE__);
}

/* reduction(task, +) on a parallel region: the implicit tasks and their explicit tasks. */
static void parallel_task_reduction(int threads) {
  long sum = 0;
#pragma omp parallel reduction(task, + : sum)
  {
    sum += 1;
    for (int i = 0; i < 10; ++i) {
#pragma omp task in_reduction(+ : sum)
      sum += 1000;
    }
  }
  check_equal(sum, threads + threads * 10 * 1000L, "reduction(task, +) on parallel", __LINE__);
}

/* reduction(task, +) on a loop, on sections and on a scope, inside one region. */
static void worksharing_task_reductions(int threads) {
  long loop = 0;
  long sections = 0;
  long scope = 0;
#pragma omp parallel
  {
#pragma omp for reduction(task, + : loop)
    for (int i = 0; i < TASKS; ++i) {
      loop += 1;
#pragma omp task in_reduction(+ : loop)
      loop += i;
    }
#pragma omp sections reduction(task, + : sections)
    {
#pragma omp section
      {
#pragma omp task in_reduction(+ : sections)
        sections += 10;
      }
#pragma omp section
      sections += 1;
    }
#ifdef __clang__
    /* clang 14 has no scope construct: a reduction of each thread's own taskgroup over one task,
     * into a variable of the thread's (every thread's group combining into the shared one at its
     * end would race), added to the shared one. */
    long mine = 0;
#pragma omp taskgroup task_reduction(+ : mine)
    {
#pragma omp task in_reduction(+ : mine)
      mine += 2;
    }
#pragma omp atomic
    scope += mine;
#else
#pragma omp scope reduction(task, + : scope)
    {
#pragma omp task in_reduction(+ : scope)
      scope += 2;
    }
#endif
  }
  check_equal(loop, TASKS + triangle(TASKS), "reduction(task, +) on a loop", __LINE__);
  check_equal(sections, 11, "reduction(task, +) on sections", __LINE__);
  check_equal(scope, 2L * threads, "reduction(task, +) on a scope", __LINE__);
}

/* reduction on taskloop (its own taskgroup), in a region and outside any, with an empty loop;
 * and in_reduction on a taskloop inside a taskgroup's reduction. */
static void taskloop_reductions(void) {
  long sum = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskloop reduction(+ : sum) grainsize(7)
  for (int i = 0; i < TASKS; ++i) sum += i;
  check_equal(sum, triangle(TASKS), "taskloop reduction in a region", __LINE__);

  long alone = 0;
#pragma omp taskloop reduction(+ : alone) num_tasks(5)
  for (int i = 0; i < TASKS; ++i) alone += i;
  check_equal(alone, triangle(TASKS), "taskloop reduction outside a region", __LINE__);

  long none = 3;
  const int empty = omp_get_num_procs() > 0 ? 0 : 1;
#pragma omp taskloop reduction(+ : none)
  for (int i = 0; i < empty; ++i) none += 1;
  check_equal(none, 3, "taskloop reduction over no iteration", __LINE__);

  long grouped = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup task_reduction(+ : grouped)
  {
#pragma omp taskloop in_reduction(+ : grouped) nogroup
    for (int i = 0; i < TASKS; ++i) grouped += i;
#pragma omp task in_reduction(+ : grouped)
    grouped += 1;
  }
  check_equal(grouped, triangle(TASKS) + 1, "taskloop in_reduction in a taskgroup", __LINE__);
}

/* detach: a task completes once its body returned and its event was fulfilled; a task depending
 * on it starts only then. In a team of one, where weft runs tasks undeferred, the event is
 * fulfilled by the task itself. */
static void detach_events(int threads) {
  int body_done = 0;
  int fulfilled = 0;
  int successor_saw = -1;
#pragma omp parallel
#pragma omp single
  {
    omp_event_handle_t event;
    if (threads > 1) {
#pragma omp task detach(event) depend(out : body_done) shared(body_done)
      __atomic_store_n(&body_done, 1, __ATOMIC_RELEASE);
#pragma omp task depend(in : body_done) shared(body_done, fulfilled, successor_saw)
      successor_saw = __atomic_load_n(&body_done, __ATOMIC_ACQUIRE) +
                      __atomic_load_n(&fulfilled, __ATOMIC_ACQUIRE);
#pragma omp task firstprivate(event) shared(fulfilled)
      {
        __atomic_store_n(&fulfilled, 1, __ATOMIC_RELEASE);
        omp_fulfill_event(event);
      }
    } else {
#pragma omp task detach(event) shared(body_done, fulfilled)
      {
        body_done = 1;
        fulfilled = 1;
        omp_fulfill_event(event);
      }
#pragma omp taskwait
      successor_saw = body_done + fulfilled;
    }
#pragma omp taskwait
  }
  check_equal(successor_saw, 2, "a dependent task runs after the body and the event", __LINE__);
}

int main(void) {
  const int threads = expected_threads();
  taskgroup_reductions();
  nested_taskgroups();
  parallel_task_reduction(threads);
  worksharing_task_reductions(threads);
  taskloop_reductions();
  detach_events(threads);
  return omp_check_status("omp_task_reductions");
}
