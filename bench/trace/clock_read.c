/* What one read of each clock a trace may record with costs (bench/trace/run): the time-stamp
 * counter (rdtsc, trace.clock=auto where it is usable) and clock_gettime(CLOCK_MONOTONIC)
 * (trace.clock=monotonic, and every machine without a usable TSC). Each is read back to back in
 * batches of 20 000 (under a millisecond, shorter than a time slice); the cheapest of 200 is
 * printed, in ns per read, so that a loaded machine (a batch that lost its core) changes little.
 *
 *   clock_read      prints "clock_read_ns <clock> <ns>" per clock */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

enum { kReads = 20000, kBatches = 200 };

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static volatile uint64_t sink;

static double cheapest(uint64_t (*read)(void)) {
  double best = 1e30;
  for (int b = 0; b < kBatches; ++b) {
    uint64_t sum = 0;
    const uint64_t start = now_ns();
    for (int i = 0; i < kReads; ++i) sum += read();
    const double ns = (double)(now_ns() - start) / kReads;
    sink = sum;
    if (ns < best) best = ns;
  }
  return best;
}

#if defined(__x86_64__)
static uint64_t read_tsc(void) {
  return __rdtsc();
}
#endif

int main(void) {
#if defined(__x86_64__)
  printf("clock_read_ns rdtsc %.2f\n", cheapest(read_tsc));
#endif
  printf("clock_read_ns clock_gettime %.2f\n", cheapest(now_ns));
  return 0;
}
