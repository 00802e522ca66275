/* Worksharing: loops with every schedule over long and unsigned long long (increasing,
 * decreasing, empty, nowait chains), ordered loops, doacross loops (ordered(n) with sink and
 * source dependences), sections, single and copyprivate, reductions
 * (scalars and arrays), lastprivate(conditional) and inscan reductions (memory GCC asks the
 * runtime to share per construct), critical (named and unnamed), atomic and the lock API. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "omp_check.h"

enum { N = 1000 };

static int hits[N];

static void clear_hits(void) {
  memset(hits, 0, sizeof hits);
}

static long count_bad_hits(void) {
  long bad = 0;
  for (int i = 0; i < N; ++i) bad += hits[i] != 1;
  return bad;
}

static void schedules(void) {
  const char* names[] = {"static", "static,7", "dynamic", "dynamic,13",
                         "guided", "guided,5", "runtime", "auto"};
  for (int kind = 0; kind < 8; ++kind) {
    clear_hits();
#pragma omp parallel
    {
      switch (kind) {
        case 0:
#pragma omp for schedule(static)
          for (int i = 0; i < N; ++i) hits[i]++;
          break;
        case 1:
#pragma omp for schedule(static, 7)
          for (int i = 0; i < N; ++i) hits[i]++;
          break;
        case 2:
#pragma omp for schedule(dynamic)
          for (int i = 0; i < N; ++i) hits[i]++;
          break;
        case 3:
#pragma omp for schedule(nonmonotonic : dynamic, 13)
          for (int i = 0; i < N; ++i) hits[i]++;
          break;
        case 4:
#pragma omp for schedule(guided)
          for (int i = 0; i < N; ++i) hits[i]++;
          break;
        case 5:
#pragma omp for schedule(guided, 5)
          for (int i = 0; i < N; ++i) hits[i]++;
          break;
        case 6:
#pragma omp for schedule(runtime)
          for (int i = 0; i < N; ++i) hits[i]++;
          break;
        default:
#pragma omp for schedule(auto)
          for (int i = 0; i < N; ++i) hits[i]++;
          break;
      }
    }
    if (count_bad_hits() != 0) check_equal(count_bad_hits(), 0, names[kind], __LINE__);
  }
}

static void iteration_spaces(void) {
  /* Decreasing long loop with a stride, in a combined construct. */
  long sum = 0;
#pragma omp parallel for schedule(dynamic, 3) reduction(+ : sum)
  for (long i = 1000; i > -1000; i -= 7) sum += i;
  long expected = 0;
  for (long i = 1000; i > -1000; i -= 7) expected += i;
  check_equal(sum, expected, "decreasing long loop", __LINE__);

  /* unsigned long long beyond the range of long. */
  unsigned long long big = 0;
  const unsigned long long base = 0xF000000000000000ULL;
#pragma omp parallel for schedule(guided, 2) reduction(+ : big)
  for (unsigned long long u = base; u < base + 300; u += 3) big += u - base;
  check_equal((long)big, 14850, "unsigned long long loop above LONG_MAX", __LINE__);

  unsigned long long down = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : down)
  for (unsigned long long u = base + 100; u > base; --u) down += 1;
  check_equal((long)down, 100, "decreasing unsigned long long loop", __LINE__);

  int empty = 0;
#pragma omp parallel for schedule(dynamic)
  for (int i = 5; i < 5; ++i) empty++;
  check_equal(empty, 0, "empty loop", __LINE__);

  /* Loops with nowait in a chain longer than the ring of constructs. */
  int chain[20] = {0};
#pragma omp parallel
  {
    for (int k = 0; k < 20; ++k) {
#pragma omp for schedule(dynamic) nowait
      for (int i = 0; i < 50; ++i) {
#pragma omp atomic
        chain[k]++;
      }
    }
  }
  for (int k = 0; k < 20; ++k) check_equal(chain[k], 50, "nowait chain", __LINE__);
}

static void ordered_loops(void) {
  int order[N];
  int next = 0;
#pragma omp parallel for ordered schedule(dynamic, 3)
  for (int i = 0; i < N; ++i) {
#pragma omp ordered
    order[next++] = i;
  }
  long wrong = 0;
  for (int i = 0; i < N; ++i) wrong += order[i] != i;
  check_equal(wrong, 0, "ordered dynamic: iterations in order", __LINE__);

  next = 0;
#pragma omp parallel for ordered schedule(static)
  for (int i = 0; i < N; ++i) {
    if (i % 3 == 0) {
#pragma omp ordered
      order[next++] = i;
    }
  }
  wrong = 0;
  for (int i = 0; i < next; ++i) wrong += order[i] != 3 * i;
  check_equal(wrong, 0, "ordered static, some iterations without the region", __LINE__);
  check_equal(next, (N + 2) / 3, "ordered regions run", __LINE__);
}

static int chain[200];
static int grid[24][24];
static int serial_grid[24][24];

static void doacross_loops(void) {
  memset(chain, 0, sizeof chain);
#pragma omp parallel for ordered(1) schedule(dynamic, 2)
  for (int i = 1; i < 200; ++i) {
#pragma omp ordered depend(sink : i - 1)
    chain[i] = chain[i - 1] + 1;
#pragma omp ordered depend(source)
  }
  check_equal(chain[199], 199, "1-deep doacross chain", __LINE__);

  memset(grid, 0, sizeof grid);
  memset(serial_grid, 0, sizeof serial_grid);
#pragma omp parallel for ordered(2) schedule(static, 3)
  for (int i = 1; i < 24; ++i) {
    for (int j = 1; j < 24; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      grid[i][j] = (grid[i - 1][j] + grid[i][j - 1] + 1) % 1000003;
#pragma omp ordered depend(source)
    }
  }
  for (int i = 1; i < 24; ++i) {
    for (int j = 1; j < 24; ++j) {
      serial_grid[i][j] = (serial_grid[i - 1][j] + serial_grid[i][j - 1] + 1) % 1000003;
    }
  }
  check_equal(grid[23][23], serial_grid[23][23], "2-deep doacross wavefront", __LINE__);

  unsigned long long big_chain[50] = {0};
#pragma omp parallel for ordered(1) schedule(guided)
  for (unsigned long long u = 1; u < 50; ++u) {
#pragma omp ordered depend(sink : u - 1)
    big_chain[u] = big_chain[u - 1] + 2;
#pragma omp ordered depend(source)
  }
  check_equal((long)big_chain[49], 98, "unsigned long long doacross chain", __LINE__);
}

static void sections_and_single(void) {
  int ran[5] = {0};
#pragma omp parallel
  {
#pragma omp sections
    {
#pragma omp section
      ran[0]++;
#pragma omp section
      ran[1]++;
#pragma omp section
      ran[2]++;
#pragma omp section
      ran[3]++;
#pragma omp section
      ran[4]++;
    }
  }
  for (int s = 0; s < 5; ++s) check_equal(ran[s], 1, "each section once", __LINE__);

  int combined[3] = {0};
#pragma omp parallel sections
  {
#pragma omp section
    combined[0]++;
#pragma omp section
    combined[1]++;
#pragma omp section
    combined[2]++;
  }
  for (int s = 0; s < 3; ++s) check_equal(combined[s], 1, "parallel sections", __LINE__);

  int singles = 0;
  long copied_wrong = 0;
#pragma omp parallel reduction(+ : copied_wrong)
  {
    for (int round = 0; round < 30; ++round) {
#pragma omp single nowait
      {
#pragma omp atomic
        singles++;
      }
      int value;
#pragma omp single copyprivate(value)
      value = round * 3 + 1;
      copied_wrong += value != round * 3 + 1;
    }
  }
  check_equal(singles, 30, "single nowait runs once per encounter", __LINE__);
  check_equal(copied_wrong, 0, "copyprivate gives every thread the value", __LINE__);
}

static void reductions(void) {
  long sum = 0;
  double product = 1;
  int max = -1;
  long array[4] = {0};
  int all = 1;
#pragma omp parallel for reduction(+ : sum) reduction(* : product) reduction(max : max) \
    reduction(+ : array[:4]) reduction(&& : all)
  for (int i = 0; i < N; ++i) {
    sum += i;
    if (i < 10) product *= 2;
    if (i > max) max = i;
    array[i % 4] += 1;
    all = all && i >= 0;
  }
  check_equal(sum, (long)N * (N - 1) / 2, "+ reduction", __LINE__);
  check_equal((long)product, 1024, "* reduction", __LINE__);
  check_equal(max, N - 1, "max reduction", __LINE__);
  for (int k = 0; k < 4; ++k) check_equal(array[k], N / 4, "array section reduction", __LINE__);
  check_equal(all, 1, "&& reduction", __LINE__);
}

/* lastprivate(conditional): the value of the last iteration that assigned, whichever thread ran
 * it; inscan: prefix sums, inclusive and exclusive. */
#ifndef __clang__
static void construct_memory(void) {
  int last = -1;
#pragma omp parallel for lastprivate(conditional : last) schedule(static, 7)
  for (int i = 0; i < N; ++i) {
    if (i % 13 == 5) last = i;
  }
  int expected = -1;
  for (int i = 0; i < N; ++i) {
    if (i % 13 == 5) expected = i;
  }
  check_equal(last, expected, "lastprivate(conditional)", __LINE__);

  static long inclusive[N];
  static long exclusive[N];
  long sum = 0;
#pragma omp parallel for reduction(inscan, + : sum)
  for (int i = 0; i < N; ++i) {
    sum += i;
#pragma omp scan inclusive(sum)
    inclusive[i] = sum;
  }
  long before = 0;
#pragma omp parallel for reduction(inscan, + : before)
  for (int i = 0; i < N; ++i) {
    exclusive[i] = before;
#pragma omp scan exclusive(before)
    before += i;
  }
  long bad = 0;
  for (long i = 0; i < N; ++i) {
    bad += inclusive[i] != i * (i + 1) / 2;
    bad += exclusive[i] != i * (i - 1) / 2;
  }
  check_equal(bad, 0, "inscan prefix sums", __LINE__);
  check_equal(sum, (long)N * (N - 1) / 2, "inscan total", __LINE__);
}
#endif

static void mutual_exclusion(void) {
  long plain = 0;
  long named = 0;
  double atomic_double = 0;
  long captured_max = 0;
  omp_lock_t lock;
  omp_nest_lock_t nest;
  long locked = 0;
  long nested_locked = 0;
  omp_init_lock(&lock);
  omp_init_nest_lock(&nest);
#pragma omp parallel
  {
    for (int i = 0; i < 200; ++i) {
#pragma omp critical
      plain++;
#pragma omp critical(other)
      named += 2;
#pragma omp atomic
      atomic_double += 0.5;
      long old;
#pragma omp atomic capture
      old = captured_max++;
      (void)old;
      omp_set_lock(&lock);
      locked++;
      omp_unset_lock(&lock);
      omp_set_nest_lock(&nest);
      omp_set_nest_lock(&nest);
      nested_locked++;
      omp_unset_nest_lock(&nest);
      omp_unset_nest_lock(&nest);
      while (!omp_test_lock(&lock)) {
      }
      locked++;
      omp_unset_lock(&lock);
    }
  }
  const int threads = omp_get_max_threads();
  check_equal(plain, 200L * threads, "unnamed critical", __LINE__);
  check_equal(named, 400L * threads, "named critical", __LINE__);
  check_equal((long)atomic_double, 100L * threads, "atomic on a double", __LINE__);
  check_equal(captured_max, 200L * threads, "atomic capture", __LINE__);
  check_equal(locked, 400L * threads, "omp_set_lock and omp_test_lock", __LINE__);
  check_equal(nested_locked, 200L * threads, "nestable lock", __LINE__);
  check_equal(omp_test_nest_lock(&nest), 1, "omp_test_nest_lock on a free lock", __LINE__);
  check_equal(omp_test_nest_lock(&nest), 2, "omp_test_nest_lock nests", __LINE__);
  omp_unset_nest_lock(&nest);
  omp_unset_nest_lock(&nest);
  omp_destroy_nest_lock(&nest);
  omp_destroy_lock(&lock);
}

int main(void) {
  schedules();
  iteration_spaces();
  ordered_loops();
  doacross_loops();
  sections_and_single();
  reductions();
#ifndef __clang__
  /* clang 14 compiles lastprivate(conditional) and inscan on these loops to code that gets them
   * wrong whatever the runtime (the same program linked with libomp fails the same checks). */
  construct_memory();
#endif
  mutual_exclusion();
  return omp_check_status("omp_worksharing");
}
