/* What the OMP_* variables a registration sets do to the program (omp.environment_effects.*):
 * the ICVs the API reports and the team sizes they give. The expectations are read from the same
 * variables, parsed here independently; OMP_NUM_THREADS must be a two-level list. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "omp_check.h"

static long env_long(const char* name, long unset) {
  const char* text = getenv(name);
  return text != NULL ? strtol(text, NULL, 10) : unset;
}

static int env_true(const char* name) {
  const char* text = getenv(name);
  return text != NULL && strcmp(text, "true") == 0;
}

static long min_long(long a, long b) {
  return a < b ? a : b;
}

/* Touches `bytes` of the caller's stack page by page; a stack smaller than that overflows. */
static long __attribute__((noinline)) touch_stack(long bytes) {
  volatile char block[bytes];
  for (long at = 0; at < bytes; at += 4096) block[at] = (char)(at >> 12);
  long sum = 0;
  for (long at = 0; at < bytes; at += 4096) sum += block[at];
  return sum;
}

static void nesting(long outer, long inner, long max_active_levels, long limit) {
  int outer_size = 0;
  int outer_max_threads = 0;
  int inner_size = 0;
  int inner_max_threads = 0;
  int innermost_size = 0;
  int innermost_active = 0;
  int innermost_level = 0;
  int inner_live = 0;    /* inner teams' threads other than their masters, now */
  int inner_threads = 0; /* the most of them seen at once */
#pragma omp parallel
  {
#pragma omp single
    {
      outer_size = omp_get_num_threads();
      outer_max_threads = omp_get_max_threads();
    }
#pragma omp parallel
    {
      if (omp_get_ancestor_thread_num(1) == 0 && omp_get_thread_num() == 0) {
        inner_size = omp_get_num_threads();
        inner_max_threads = omp_get_max_threads();
      }
      /* Workers of inner teams at the same time (each counted from before its team's barrier
       * to after the next), the most any of them saw. */
      if (omp_get_thread_num() != 0) __atomic_add_fetch(&inner_live, 1, __ATOMIC_RELAXED);
#pragma omp barrier
      const int live = __atomic_load_n(&inner_live, __ATOMIC_RELAXED);
      int seen = __atomic_load_n(&inner_threads, __ATOMIC_RELAXED);
      while (live > seen && !__atomic_compare_exchange_n(&inner_threads, &seen, live, 0,
                                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      }
#pragma omp barrier
      if (omp_get_thread_num() != 0) __atomic_sub_fetch(&inner_live, 1, __ATOMIC_RELAXED);
#pragma omp parallel
      if (omp_get_ancestor_thread_num(1) == 0 && omp_get_ancestor_thread_num(2) == 0 &&
          omp_get_thread_num() == 0) {
        innermost_size = omp_get_num_threads();
        innermost_active = omp_get_active_level();
        innermost_level = omp_get_level();
      }
    }
  }
  long expected_outer = min_long(outer, limit);
  /* dyn-var lets weft keep a team to the rank's cores, and it does (docs/omp_bridge.md). */
  if (omp_get_dynamic()) expected_outer = min_long(expected_outer, omp_get_num_procs());
  check_equal(outer_size, expected_outer, "outer team size", __LINE__);
  /* The second element of the list is the nthreads-var of the outer team's threads. */
  check_equal(outer_max_threads, min_long(inner, limit), "omp_get_max_threads() at level 1",
              __LINE__);
  long expected_inner = max_active_levels >= 2 ? inner : 1;
  if (omp_get_dynamic()) expected_inner = min_long(expected_inner, omp_get_num_procs());
  /* thread-limit-var bounds the whole contention group: past it, nested teams shrink (which
   * ones depends on which master comes first). */
  if (outer * inner <= limit || max_active_levels < 2) {
    check_equal(inner_size, expected_inner, "inner team size", __LINE__);
  }
  check_equal(outer_size + inner_threads <= limit, 1,
              "threads of the outer and inner teams within OMP_THREAD_LIMIT", __LINE__);
  check_equal(inner_max_threads, min_long(inner, limit), "omp_get_max_threads() at level 2",
              __LINE__);
  check_equal(innermost_level, 3, "omp_get_level() in the third nested region", __LINE__);
  if (max_active_levels <= 2) {
    check_equal(innermost_size, 1, "team size of a region beyond max-active-levels", __LINE__);
    /* An inner team the thread limit shrank to one thread is not active. */
    if (outer * inner <= limit || max_active_levels < 2) {
      check_equal(innermost_active, max_active_levels < 2 ? max_active_levels : 2,
                  "omp_get_active_level() beyond max-active-levels", __LINE__);
    }
  }
}

/* Each thread of a team other than its master runs on a worker stack of OMP_STACKSIZE: half of
 * it touched page by page fits there, and not in weft's default 4 MiB. */
static void worker_stacks(long stack_bytes) {
  long touched = 0;
  long workers = 0;
  const long bytes = stack_bytes / 2;
#pragma omp parallel reduction(+ : touched, workers)
  if (omp_get_thread_num() != 0) {
    workers++;
    touched += touch_stack(bytes) == touch_stack(bytes) ? 1 : 0;
  }
  check_equal(touched, workers, "workers that used half of an OMP_STACKSIZE stack", __LINE__);
}

/* omp_get_schedule reports OMP_SCHEDULE's kind, chunk and monotonic modifier (given here as
 * [monotonic:|nonmonotonic:]dynamic|guided|static,chunk). */
static void run_schedule(const char* text) {
  int monotonic = 0;
  const char* colon = strchr(text, ':');
  if (colon != NULL) {
    monotonic = strncmp(text, "monotonic:", 10) == 0;
    text = colon + 1;
  }
  omp_sched_t expected = omp_sched_static;
  if (strncmp(text, "dynamic", 7) == 0) expected = omp_sched_dynamic;
  if (strncmp(text, "guided", 6) == 0) expected = omp_sched_guided;
  const char* comma = strchr(text, ',');
  omp_sched_t kind;
  int chunk = 0;
  omp_get_schedule(&kind, &chunk);
  check_equal((int)kind & ~(int)omp_sched_monotonic, expected, "omp_get_schedule() kind", __LINE__);
  check_equal(((int)kind & (int)omp_sched_monotonic) != 0, monotonic,
              "omp_get_schedule() monotonic modifier", __LINE__);
  if (comma != NULL)
    check_equal(chunk, strtol(comma + 1, NULL, 10), "omp_get_schedule() chunk", __LINE__);
}

/* def-allocator-var starts as OMP_ALLOCATOR's predefined allocator; any other value gets a warning
 * and omp_default_mem_alloc (OpenMP 5.1, 6.22: the default when the allocator cannot be made). */
static void default_allocator(const char* text) {
  static const struct {
    const char* name;
    omp_allocator_handle_t handle;
  } known[] = {{"omp_default_mem_alloc", omp_default_mem_alloc},
               {"omp_large_cap_mem_alloc", omp_large_cap_mem_alloc},
               {"omp_high_bw_mem_alloc", omp_high_bw_mem_alloc},
               {"omp_low_lat_mem_space", omp_low_lat_mem_alloc}};
  omp_allocator_handle_t expected = omp_default_mem_alloc;
  for (size_t at = 0; at < sizeof known / sizeof known[0]; ++at) {
    if (strcmp(text, known[at].name) == 0) expected = known[at].handle;
  }
  check_equal((long)omp_get_default_allocator(), (long)expected, "omp_get_default_allocator()",
              __LINE__);
}

int main(void) {
  const char* list = getenv("OMP_NUM_THREADS");
  char* second = NULL;
  const long outer = list != NULL ? strtol(list, &second, 10) : 0;
  if (second == NULL || *second != ',') {
    fprintf(stderr, "omp_environment_effects: OMP_NUM_THREADS must be a list n1,n2, not \"%s\"\n",
            list != NULL ? list : "(unset)");
    return 1;
  }
  const long inner = strtol(second + 1, NULL, 10);
  const long limit = env_long("OMP_THREAD_LIMIT", 1L << 30);
  /* Unset, nesting is on for as many levels as the list has (OpenMP 5.0). */
  const long max_active_levels = env_long("OMP_MAX_ACTIVE_LEVELS", 2);

  check_equal(omp_get_thread_limit(), limit, "omp_get_thread_limit()", __LINE__);
  check_equal(omp_get_max_threads(), min_long(outer, limit), "omp_get_max_threads()", __LINE__);
  check_equal(omp_get_dynamic(), env_true("OMP_DYNAMIC"), "omp_get_dynamic()", __LINE__);
  check_equal(omp_get_max_active_levels(), max_active_levels, "omp_get_max_active_levels()",
              __LINE__);
  nesting(outer, inner, max_active_levels, limit);
  if (getenv("OMP_SCHEDULE") != NULL) run_schedule(getenv("OMP_SCHEDULE"));
  if (getenv("OMP_ALLOCATOR") != NULL) default_allocator(getenv("OMP_ALLOCATOR"));
  /* Given in MiB by the registrations (e.g. 16M). */
  const long stack_mib = env_long("OMP_STACKSIZE", 0);
  if (stack_mib != 0) worker_stacks(stack_mib << 20);
  return omp_check_status("omp_environment_effects");
}
