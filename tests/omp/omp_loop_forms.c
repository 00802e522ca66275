/* The loop entry points GCC picks for unusual iteration spaces: `unsigned long long` loops whose
 * bounds do not fit in a long (GOMP_loop_ull_* static, runtime and ordered, up and down; ull
 * doacross with GOMP_doacross_ull_post/wait; GOMP_taskloop_ull), and a doacross loop under
 * schedule(runtime) (GOMP_loop_doacross_runtime_start). Each iteration must run once, in order
 * where the construct orders it. GCC 12 computes static ull loops inline, so
 * GOMP_loop_ull_static_start is called as its ABI has it, as other GCC versions may. */
#include <omp.h>

#include "omp_check.h"

enum { kCount = 1000 };

/* Above LONG_MAX, and opaque to the compiler, so that GCC cannot narrow the loops to long. */
static unsigned long long __attribute__((noinline)) large_base(void) {
  static volatile unsigned long long base = (1ULL << 63) + 12345;
  return base;
}

static void ull_worksharing(void) {
  const unsigned long long base = large_base();
  int hits[kCount] = {0};
#pragma omp parallel shared(hits)
  {
#pragma omp for schedule(static, 7)
    for (unsigned long long i = base; i < base + kCount; ++i) {
#pragma omp atomic
      hits[i - base]++;
    }
#pragma omp for schedule(static)
    for (unsigned long long i = base + kCount; i > base; --i) {
#pragma omp atomic
      hits[i - base - 1]++;
    }
#pragma omp for schedule(runtime)
    for (unsigned long long i = base; i < base + kCount; i += 2) {
#pragma omp atomic
      hits[i - base]++;
    }
#pragma omp for schedule(monotonic : runtime)
    for (unsigned long long i = base; i < base + kCount; i += 3) {
#pragma omp atomic
      hits[i - base]++;
    }
  }
  long wrong = 0;
  for (int i = 0; i < kCount; ++i) wrong += hits[i] != 2 + (i % 2 == 0) + (i % 3 == 0);
  check_equal(wrong, 0, "ull loops (static, downward, runtime) run each iteration once", __LINE__);
}

_Bool GOMP_loop_ull_static_start(_Bool up, unsigned long long start, unsigned long long end,
                                 unsigned long long incr, unsigned long long chunk,
                                 unsigned long long* istart, unsigned long long* iend);
_Bool GOMP_loop_ull_static_next(unsigned long long* istart, unsigned long long* iend);
void GOMP_loop_end(void);

static void ull_static_entry_point(void) {
  const unsigned long long base = large_base();
  int hits[kCount] = {0};
#pragma omp parallel shared(hits)
  {
    unsigned long long start = 0;
    unsigned long long end = 0;
    if (GOMP_loop_ull_static_start(1, base, base + kCount, 2, 5, &start, &end)) {
      do {
        for (unsigned long long i = start; i < end; i += 2) {
#pragma omp atomic
          hits[i - base]++;
        }
      } while (GOMP_loop_ull_static_next(&start, &end));
    }
    GOMP_loop_end();
  }
  long wrong = 0;
  for (int i = 0; i < kCount; ++i) wrong += hits[i] != (i % 2 == 0);
  check_equal(wrong, 0, "GOMP_loop_ull_static_start's chunks cover each iteration once", __LINE__);
}

static void check_sequence(const int* sequence, int count, const char* what, int line) {
  check_equal(count, kCount, what, line);
  long wrong = 0;
  for (int i = 0; i < kCount; ++i) wrong += sequence[i] != i;
  check_equal(wrong, 0, what, line);
}

static void ull_ordered(void) {
  const unsigned long long base = large_base();
  int sequence[kCount];
  int next = 0;
#pragma omp parallel for ordered schedule(static, 3) shared(sequence, next)
  for (unsigned long long i = base; i < base + kCount; ++i) {
#pragma omp ordered
    sequence[next++] = (int)(i - base);
  }
  check_sequence(sequence, next, "ull ordered blocks (static) in iteration order", __LINE__);
  next = 0;
#pragma omp parallel for ordered schedule(runtime) shared(sequence, next)
  for (unsigned long long i = base; i < base + kCount; ++i) {
#pragma omp ordered
    sequence[next++] = (int)(i - base);
  }
  check_sequence(sequence, next, "ull ordered blocks (runtime) in iteration order", __LINE__);
}

/* Each iteration reads what the previous one wrote: only the doacross waits make the chain
 * come out as 1, 2, 3, ... */
static void ull_doacross(void) {
  const unsigned long long base = large_base();
  long chain[kCount + 1];
  chain[0] = 0;
#pragma omp parallel for ordered(1) schedule(static, 1) shared(chain)
  for (unsigned long long i = base + 1; i <= base + kCount; ++i) {
#pragma omp ordered depend(sink : i - 1)
    chain[i - base] = __atomic_load_n(&chain[i - base - 1], __ATOMIC_RELAXED) + 1;
#pragma omp ordered depend(source)
  }
  long wrong = 0;
  for (int i = 0; i <= kCount; ++i) wrong += chain[i] != i;
  check_equal(wrong, 0, "ull doacross chain", __LINE__);
}

static void runtime_doacross(void) {
  long chain[kCount + 1];
  chain[0] = 0;
#pragma omp parallel for ordered(1) schedule(runtime) shared(chain)
  for (long i = 1; i <= kCount; ++i) {
#pragma omp ordered depend(sink : i - 1)
    chain[i] = __atomic_load_n(&chain[i - 1], __ATOMIC_RELAXED) + 1;
#pragma omp ordered depend(source)
  }
  long wrong = 0;
  for (int i = 0; i <= kCount; ++i) wrong += chain[i] != i;
  check_equal(wrong, 0, "doacross chain under schedule(runtime)", __LINE__);
}

static void ull_taskloop(void) {
  const unsigned long long base = large_base();
  int hits[kCount] = {0};
#pragma omp parallel shared(hits)
#pragma omp single
  {
#pragma omp taskloop grainsize(17)
    for (unsigned long long i = base; i < base + kCount; ++i) {
#pragma omp atomic
      hits[i - base]++;
    }
#pragma omp taskloop num_tasks(5)
    for (unsigned long long i = base + kCount; i > base; i -= 3) {
#pragma omp atomic
      hits[i - base - 1]++;
    }
  }
  long wrong = 0;
  for (int i = 0; i < kCount; ++i) wrong += hits[i] != 1 + ((kCount - 1 - i) % 3 == 0);
  check_equal(wrong, 0, "ull taskloop iterations each run once", __LINE__);
}

int main(void) {
  ull_worksharing();
  ull_static_entry_point();
  ull_ordered();
  ull_doacross();
  runtime_doacross();
  ull_taskloop();
  return omp_check_status("omp_loop_forms");
}
