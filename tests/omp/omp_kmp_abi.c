/* What clang 14 compiles to LLVM's __kmpc_* entry points beyond the shared conformance programs:
 * reductions by every method (run under KMP_FORCE_REDUCTION=tree and critical too), copyprivate,
 * ordered and doacross loops, static, dynamic and guided loops over every iteration type, taskloop
 * with grainsize and num_tasks, lastprivate, untied tasks, detach, mutexinoutset, host
 * teams with distribute, masked, critical with a hint, serialized regions; and entry points of
 * libomp's ABI that clang 14 does not emit but LLVM's tests call, as a newer compiler would: the
 * simd schedules of __kmpc_dispatch_*, omp_all_memory dependences, a task without a routine
 * (taskwait depend nowait). Each check prints what it expected and the program exits 1 on any
 * difference. */
#include <limits.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include "omp_check.h"

enum { N = 1000 };

typedef struct {
  long sum;
  long count;
} pair_t;

static void add_pair(pair_t* into, const pair_t* from) {
  into->sum += from->sum;
  into->count += from->count;
}
#pragma omp declare reduction(pair_add:pair_t                \
                              : add_pair(&omp_out, &omp_in)) \
    initializer(omp_priv = (pair_t){0, 0})

static void reductions(void) {
  long sum = 0;
  int max = INT_MIN;
  double product = 1.0;
  long array[4] = {0, 0, 0, 0};
  pair_t pair = {0, 0};
#pragma omp parallel for reduction(+ : sum) reduction(max : max) reduction(* : product) \
    reduction(+ : array[:4]) reduction(pair_add : pair)
  for (int i = 0; i < N; ++i) {
    sum += i;
    if (i * 7 % N > max) max = i * 7 % N;
    product *= i % 100 == 0 ? 2.0 : 1.0;
    array[i % 4] += 1;
    pair.sum += i;
    pair.count += 1;
  }
  check_equal(sum, (long)N * (N - 1) / 2, "+ reduction", __LINE__);
  check_equal(max, N - 1, "max reduction", __LINE__);
  check_equal((long)product, 1L << (N / 100), "* reduction", __LINE__);
  for (int k = 0; k < 4; ++k) check_equal(array[k], N / 4, "array section reduction", __LINE__);
  check_equal(pair.sum, (long)N * (N - 1) / 2, "declared reduction's sum", __LINE__);
  check_equal(pair.count, N, "declared reduction's count", __LINE__);

  long nowait_sum = 0;
  long after = 0;
#pragma omp parallel
  {
#pragma omp for reduction(+ : nowait_sum) nowait
    for (int i = 0; i < N; ++i) nowait_sum += 1;
#pragma omp barrier
#pragma omp single
    after = nowait_sum;
  }
  check_equal(after, N, "nowait reduction, read after a barrier", __LINE__);

  int threads = 0;
#pragma omp parallel reduction(+ : threads)
  threads += 1;
  check_equal(threads, omp_get_max_threads(), "reduction on a parallel region", __LINE__);
}

static void single_and_copyprivate(void) {
  int bad = 0;
#pragma omp parallel reduction(+ : bad)
  {
    int value = -1;
    double twin = -1.0;
#pragma omp single copyprivate(value, twin)
    {
      value = 42;
      twin = 4.5;
    }
    bad += value != 42 || twin != 4.5;
    int executed = 0;
#pragma omp single nowait
    executed = 1;
    (void)executed;
#pragma omp masked filter(1)
    bad += omp_get_thread_num() != 1;
  }
  check_equal(bad, 0, "copyprivate and masked", __LINE__);
}

static void ordered_and_doacross(void) {
  int order[N];
  int next = 0;
#pragma omp parallel for ordered schedule(dynamic, 3)
  for (int i = 0; i < N; ++i) {
#pragma omp ordered
    order[next++] = i;
  }
  int wrong = 0;
  for (int i = 0; i < N; ++i) wrong += order[i] != i;
  check_equal(wrong, 0, "ordered regions in iteration order", __LINE__);

  enum { R = 40, C = 30 };
  static long grid[R][C];
#pragma omp parallel for ordered(2) schedule(static, 1)
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < C; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      grid[i][j] = (i == 0 || j == 0) ? 1 : grid[i - 1][j] + grid[i][j - 1];
#pragma omp ordered depend(source)
    }
  }
  check_equal(grid[10][10], 184756L, "doacross wavefront (binomial 20 over 10)", __LINE__);
}

static void loop_types(void) {
  long count = 0;
  long total = 0;
#pragma omp parallel for schedule(static, 7) reduction(+ : count, total)
  for (unsigned u = 4000000000u; u > 3999999000u; u -= 3) {
    count += 1;
    total += u - 3999999000u;
  }
  check_equal(count, 334, "unsigned static chunked loop down", __LINE__);
  check_equal(total, 167167, "unsigned loop's iterations", __LINE__);
  count = 0;
#pragma omp parallel for schedule(guided, 2) reduction(+ : count)
  for (long long i = -5000000000LL; i < -4999999000LL; i += 2) count += 1;
  check_equal(count, 500, "long long guided loop", __LINE__);
  count = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : count)
  for (unsigned long long i = 0; i < 999; ++i) count += (long)i;
  check_equal(count, 998L * 999 / 2, "unsigned long long dynamic loop", __LINE__);
  count = 0;
#pragma omp parallel for schedule(runtime) collapse(2) reduction(+ : count)
  for (int i = 0; i < 30; ++i) {
    for (int j = i; j < 30; ++j) count += 1;
  }
  check_equal(count, 465, "collapsed triangular loop, runtime schedule", __LINE__);
  int last = -1;
#pragma omp parallel for lastprivate(last) schedule(static, 5)
  for (int i = 0; i < 103; ++i) last = i;
  check_equal(last, 102, "lastprivate of a static chunked loop", __LINE__);
  int sections = 0;
#pragma omp parallel sections reduction(+ : sections)
  {
#pragma omp section
    sections += 1;
#pragma omp section
    sections += 10;
#pragma omp section
    sections += 100;
  }
  check_equal(sections, 111, "sections", __LINE__);
}

static void tasks(void) {
  long sum = 0;
  int last = -1;
#pragma omp parallel
#pragma omp single
  {
#pragma omp taskloop grainsize(7) reduction(+ : sum) lastprivate(last)
    for (int i = 0; i < N; ++i) {
      sum += i;
      last = i;
    }
  }
  check_equal(sum, (long)N * (N - 1) / 2, "taskloop reduction", __LINE__);
  check_equal(last, N - 1, "taskloop lastprivate", __LINE__);

  long covered = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskloop num_tasks(9) shared(covered)
  for (int i = 0; i < 100; ++i) {
#pragma omp atomic
    covered += i;
  }
  check_equal(covered, 4950, "taskloop num_tasks(9)", __LINE__);

  int steps = 0;
  int in_order = 1;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task untied shared(steps, in_order)
    {
      for (int k = 0; k < 5; ++k) {
#pragma omp task shared(steps)
        {
#pragma omp atomic
          steps += 1;
        }
#pragma omp taskwait
        if (steps != k + 1) in_order = 0;
      }
    }
  }
  check_equal(steps, 5, "an untied task's children", __LINE__);
  check_equal(in_order, 1, "taskwait in an untied task", __LINE__);

  int chain = 0;
  int seen_event = 0;
#pragma omp parallel
#pragma omp single
  {
    omp_event_handle_t event;
#pragma omp task detach(event) depend(out : chain) shared(chain)
    chain = 1;
#pragma omp task depend(in : chain) shared(chain, seen_event)
    seen_event = chain;
    omp_fulfill_event(event);
#pragma omp taskwait
  }
  check_equal(seen_event, 1, "a task after a detached one", __LINE__);

  int holder = 0;
  int overlap = 0;
#pragma omp parallel
#pragma omp single
  for (int k = 0; k < 8; ++k) {
#pragma omp task depend(mutexinoutset : holder) shared(holder, overlap)
    {
      int inside;
#pragma omp atomic capture
      inside = ++holder;
      overlap += inside != 1;
#pragma omp atomic
      holder -= 1;
    }
  }
  check_equal(overlap, 0, "mutexinoutset tasks one at a time", __LINE__);

  int undeferred = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task if (0) shared(undeferred)
    undeferred = omp_in_final() ? 2 : 1;
  }
  check_equal(undeferred, 1, "an if(0) task", __LINE__);
}

static void teams_and_nesting(void) {
  long sum = 0;
  int league = 0;
#pragma omp teams num_teams(3) reduction(+ : sum, league)
  {
    league += omp_get_team_num() == 0 ? omp_get_num_teams() : 0;
#pragma omp distribute parallel for reduction(+ : sum)
    for (int i = 0; i < N; ++i) sum += i;
  }
  check_equal(league, 3, "num_teams(3)", __LINE__);
  check_equal(sum, (long)N * (N - 1) / 2, "teams distribute parallel for", __LINE__);

  /* Every team's initial thread starts with the encountering thread's nthreads-var. */
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(5);
  int team_threads = 0;
#pragma omp teams num_teams(2) reduction(+ : team_threads)
#pragma omp parallel reduction(+ : team_threads)
  team_threads += 1;
  omp_set_num_threads(saved_threads);
  check_equal(team_threads, 2 * 5, "threads of two teams' regions under nthreads-var 5", __LINE__);

  int level = -1;
  int active = -1;
  int serial = 0;
#pragma omp parallel if (0)
  {
    level = omp_get_level();
    active = omp_get_active_level();
#pragma omp parallel for reduction(+ : serial)
    for (int i = 0; i < 10; ++i) serial += 1;
  }
  check_equal(level, 1, "omp_get_level() in a serialized region", __LINE__);
  check_equal(active, 0, "omp_get_active_level() in a serialized region", __LINE__);
  check_equal(serial, 10, "a loop in a serialized region", __LINE__);

  long guarded = 0;
#pragma omp parallel num_threads(4)
  for (int k = 0; k < 100; ++k) {
#pragma omp critical(hinted) hint(omp_sync_hint_contended)
    guarded += 1;
  }
  check_equal(guarded, 400, "critical with a hint", __LINE__);
}

/* libomp 14's layouts of what the calls below take. */
typedef struct {
  int reserved_1, flags, reserved_2, reserved_3;
  const char* psource;
} kmp_ident;
typedef struct {
  ptrdiff_t base_addr;
  size_t len;
  unsigned char flags; /* 1 in, 2 out, 0x80 omp_all_memory */
} kmp_dep;
typedef struct kmp_task kmp_task;
typedef int (*kmp_routine)(int, kmp_task*);
struct kmp_task {
  void** shareds;
  kmp_routine routine;
  int part_id;
  void* destructors;
  int priority;
  long long device_id;
  int data;
};
int __kmpc_global_thread_num(kmp_ident*);
void __kmpc_dispatch_init_4(kmp_ident*, int, int, int, int, int, int);
int __kmpc_dispatch_next_4(kmp_ident*, int, int*, int*, int*, int*);
kmp_task* __kmpc_omp_task_alloc(kmp_ident*, int, int, size_t, size_t, kmp_routine);
int __kmpc_omp_task_with_deps(kmp_ident*, int, kmp_task*, int, kmp_dep*, int, kmp_dep*);
static kmp_ident abi_loc = {0, 2, 0, 0, ";omp_kmp_abi.c;abi;0;0;;"};

/* schedule(simd:runtime) as libomp runs it (kmp_sch_runtime_simd, the SIMD width as the chunk):
 * under run-sched-var guided,2 every chunk but the last is a multiple of 2 x the width. */
static void simd_schedule(void) {
  enum { kRuntimeSimd = 47, kWidth = 4 };
  int bad_chunks = 0;
  int iterations = 0;
  omp_set_schedule(omp_sched_guided, 2);
#pragma omp parallel num_threads(3) reduction(+ : bad_chunks, iterations)
  {
    const int gtid = __kmpc_global_thread_num(&abi_loc);
    __kmpc_dispatch_init_4(&abi_loc, gtid, kRuntimeSimd, 0, N - 1, 1, kWidth);
    int last = 0, lower = 0, upper = 0, stride = 0;
    while (__kmpc_dispatch_next_4(&abi_loc, gtid, &last, &lower, &upper, &stride)) {
      iterations += upper - lower + 1;
      if (!last && (upper - lower + 1) % (2 * kWidth) != 0) bad_chunks++;
    }
  }
  omp_set_schedule(omp_sched_dynamic, 0);
  check_equal(iterations, N, "iterations of a simd:runtime loop", __LINE__);
  check_equal(bad_chunks, 0, "simd:runtime chunks not a multiple of chunk x width", __LINE__);
}

static int all_memory_writer_done;
static int all_memory_order_errors;
static int routine_writer(int gtid, kmp_task* task) {
  (void)gtid;
  (void)task;
  usleep(20000); /* a teammate free to run the next task meanwhile must not */
  __atomic_store_n(&all_memory_writer_done, 1, __ATOMIC_RELEASE);
  return 0;
}
static int routine_all_memory(int gtid, kmp_task* task) {
  (void)gtid;
  (void)task;
  if (!__atomic_load_n(&all_memory_writer_done, __ATOMIC_ACQUIRE)) {
    __atomic_add_fetch(&all_memory_order_errors, 1, __ATOMIC_RELAXED);
  }
  __atomic_store_n(&all_memory_writer_done, 2, __ATOMIC_RELEASE);
  return 0;
}
static int routine_reader(int gtid, kmp_task* task) {
  (void)gtid;
  (void)task;
  if (__atomic_load_n(&all_memory_writer_done, __ATOMIC_ACQUIRE) != 2) {
    __atomic_add_fetch(&all_memory_order_errors, 1, __ATOMIC_RELAXED);
  }
  return 0;
}

/* A task depending on omp_all_memory runs after an earlier sibling writing any location and
 * before a later one reading any; a task without a routine (libomp's taskwait depend nowait)
 * only orders. */
static void all_memory_and_empty_tasks(void) {
  int x = 0, y = 0;
#pragma omp parallel num_threads(4) shared(x, y)
#pragma omp single
  {
    const int gtid = __kmpc_global_thread_num(&abi_loc);
    kmp_dep dep = {(ptrdiff_t)&x, sizeof x, 2};
    kmp_task* task = __kmpc_omp_task_alloc(&abi_loc, gtid, 1, sizeof(kmp_task), 0, routine_writer);
    __kmpc_omp_task_with_deps(&abi_loc, gtid, task, 1, &dep, 0, NULL);
    kmp_dep all = {0, 0, 0x80};
    task = __kmpc_omp_task_alloc(&abi_loc, gtid, 1, sizeof(kmp_task), 0, routine_all_memory);
    __kmpc_omp_task_with_deps(&abi_loc, gtid, task, 1, &all, 0, NULL);
    kmp_dep read = {(ptrdiff_t)&y, sizeof y, 1};
    task = __kmpc_omp_task_alloc(&abi_loc, gtid, 1, sizeof(kmp_task), 0, routine_reader);
    __kmpc_omp_task_with_deps(&abi_loc, gtid, task, 1, &read, 0, NULL);
    kmp_dep both[2] = {{(ptrdiff_t)&x, sizeof x, 1}, {(ptrdiff_t)&y, sizeof y, 1}};
    task = __kmpc_omp_task_alloc(&abi_loc, gtid, 1, sizeof(kmp_task), 0, NULL);
    __kmpc_omp_task_with_deps(&abi_loc, gtid, task, 2, both, 0, NULL);
  }
  check_equal(all_memory_order_errors, 0, "tasks run out of omp_all_memory's order", __LINE__);
  check_equal(all_memory_writer_done, 2, "the omp_all_memory task ran", __LINE__);
}

int main(void) {
  simd_schedule();
  all_memory_and_empty_tasks();
  reductions();
  single_and_copyprivate();
  ordered_and_doacross();
  loop_types();
  tasks();
  teams_and_nesting();
  return omp_check_status("omp_kmp_abi");
}
