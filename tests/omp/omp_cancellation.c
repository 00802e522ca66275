/* Cancellation, run with OMP_CANCELLATION=true (omp.cancellation.*): of a loop, of sections, of
 * a taskgroup and of a parallel region, each with checks that fail when the cancel is ignored or
 * comes through late: the code after a cancel never runs, and a thread held at a cancellation
 * point leaves it. */
#include <omp.h>

#include "omp_check.h"

/* A loop cancelled at its iteration 10: the cancelling thread runs nothing of the loop after its
 * cancel, and no thread takes a chunk once it sees the cancellation; a team of one runs exactly
 * the iterations up to the cancel. GCC ends the loop with GOMP_loop_end_cancel. */
static void cancel_loop(void) {
  int iterations = 0;
  int after_cancel = 0;
  int team = 0;
#pragma omp parallel shared(iterations, after_cancel, team)
  {
#pragma omp single
    team = omp_get_num_threads();
#pragma omp for schedule(dynamic)
    for (int i = 0; i < 100000; ++i) {
#pragma omp atomic
      iterations++;
#pragma omp cancel for if (i == 10)
      if (i == 10) {
#pragma omp atomic
        after_cancel++;
      }
#pragma omp cancellation point for
    }
  }
  check_equal(after_cancel, 0, "the thread that cancels a loop leaves it at the cancel", __LINE__);
  check_equal(iterations < 100000, 1, "a cancelled loop stops early", __LINE__);
  if (team == 1)
    check_equal(iterations, 11, "iterations of a team of one up to the cancel", __LINE__);
}

/* Sections cancelled by the first: the rest of the first never runs, and a section that another
 * thread had begun leaves at its cancellation point (it waits there, so it cannot end otherwise
 * unless the cancellation is lost, which a bounded wait reports). A team of one never begins the
 * second. GCC ends the construct with GOMP_sections_end_cancel. */
static void cancel_sections(void) {
  int rest_of_first = 0;
  int second_began = 0;
  int second_gave_up = 0;
  int team = 0;
#pragma omp parallel shared(rest_of_first, second_began, second_gave_up, team)
  {
#pragma omp single
    team = omp_get_num_threads();
#pragma omp sections
    {
#pragma omp section
      {
#pragma omp cancel sections
#pragma omp atomic
        rest_of_first++;
      }
#pragma omp section
      {
#pragma omp atomic
        second_began++;
        for (long spin = 0;; ++spin) {
#pragma omp cancellation point sections
          if (spin == 10000000) {
#pragma omp atomic
            second_gave_up++;
            break;
          }
#pragma omp taskyield
        }
      }
    }
  }
  check_equal(rest_of_first, 0, "the cancelling section leaves at its cancel", __LINE__);
  check_equal(second_gave_up, 0, "a begun section sees the sections' cancellation", __LINE__);
  if (team == 1) check_equal(second_began, 0, "sections not begun before a cancel", __LINE__);
}

/* Tasks of a cancelled taskgroup that had not begun are discarded: those created after the
 * cancelling task finished never run, those that had finished before it did. */
static void cancel_taskgroup(void) {
  int before = 0;
  int rest_of_canceller = 0;
  int after_cancel = 0;
#pragma omp parallel shared(before, rest_of_canceller, after_cancel)
#pragma omp single
#pragma omp taskgroup
  {
#pragma omp task shared(before)
    {
#pragma omp atomic
      before++;
    }
#pragma omp taskwait
#pragma omp task shared(rest_of_canceller)
    {
#pragma omp cancel taskgroup
#pragma omp atomic
      rest_of_canceller++;
    }
#pragma omp taskwait
    for (int t = 0; t < 5; ++t) {
#pragma omp task shared(after_cancel)
      {
#pragma omp atomic
        after_cancel++;
      }
    }
  }
  check_equal(before, 1, "a task finished before the taskgroup's cancel ran", __LINE__);
  check_equal(rest_of_canceller, 0, "the cancelling task leaves at its cancel", __LINE__);
  check_equal(after_cancel, 0, "tasks of a cancelled taskgroup not begun yet", __LINE__);
}

/* Opaque to the compiler, so that a `cancel parallel if (...)` on it stays in the region. */
static int __attribute__((noinline)) never(void) {
  static volatile int zero = 0;
  return zero;
}

/* A region containing `cancel parallel` ends its worksharing constructs with
 * GOMP_loop_end_cancel and GOMP_sections_end_cancel. Not cancelled, every thread passes them and
 * the barrier. Cancelled by thread 0, which then never reaches the barrier or worksharing end
 * that follows, every other thread leaves there (a cancellation point) instead of passing. */
static void cancel_parallel(void) {
  int loop_iterations = 0;
  int sections_run = 0;
  int passed_loop = 0;
  int passed_sections = 0;
  int passed_barrier = 0;
  int passed_cancelled_barrier = 0;
  int passed_cancelled_loop = 0;
  int passed_cancelled_sections = 0;
  int team = 0;
#pragma omp parallel shared(loop_iterations, sections_run, passed_loop, passed_sections, \
                            passed_barrier, team)
  {
#pragma omp single
    team = omp_get_num_threads();
#pragma omp for schedule(dynamic)
    for (int i = 0; i < 100; ++i) {
#pragma omp atomic
      loop_iterations++;
    }
#pragma omp atomic
    passed_loop++;
#pragma omp sections
    {
#pragma omp section
      {
#pragma omp atomic
        sections_run++;
      }
#pragma omp section
      {
#pragma omp atomic
        sections_run++;
      }
    }
#pragma omp atomic
    passed_sections++;
#pragma omp cancel parallel if (never())
#pragma omp barrier
#pragma omp atomic
    passed_barrier++;
  }
#pragma omp parallel shared(passed_cancelled_barrier)
  {
    if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
    }
#pragma omp barrier
#pragma omp atomic
    passed_cancelled_barrier++;
  }
#pragma omp parallel shared(passed_cancelled_loop)
  {
    if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
    }
#pragma omp for schedule(dynamic)
    for (int i = 0; i < 100; ++i) {
    }
#pragma omp atomic
    passed_cancelled_loop++;
  }
#pragma omp parallel shared(passed_cancelled_sections)
  {
    if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
    }
#pragma omp sections
    {
#pragma omp section
      {}
#pragma omp section
      {
      }
    }
#pragma omp atomic
    passed_cancelled_sections++;
  }
  check_equal(team, omp_get_max_threads(), "team size", __LINE__);
  check_equal(loop_iterations, 100, "iterations of a loop in a region not cancelled", __LINE__);
  check_equal(passed_loop, team, "threads past a loop's end, region not cancelled", __LINE__);
  check_equal(sections_run, 2, "sections run in a region not cancelled", __LINE__);
  check_equal(passed_sections, team, "threads past the sections' end, region not cancelled",
              __LINE__);
  check_equal(passed_barrier, team, "threads past the barrier, region not cancelled", __LINE__);
  check_equal(passed_cancelled_barrier, 0, "threads past the barrier of a cancelled region",
              __LINE__);
  check_equal(passed_cancelled_loop, 0, "threads past a loop's end in a cancelled region",
              __LINE__);
  check_equal(passed_cancelled_sections, 0, "threads past the sections' end in a cancelled region",
              __LINE__);
}

int main(void) {
  check_equal(omp_get_cancellation(), 1, "omp_get_cancellation() under OMP_CANCELLATION=true",
              __LINE__);
  cancel_loop();
  cancel_sections();
  cancel_taskgroup();
  cancel_parallel();
  return omp_check_status("omp_cancellation");
}
