/* The floor under any cross-core ping-pong on this machine: two kernel threads bound to cores 0
 * and 1 pass a counter back and forth through two cache lines, with nothing else on the path. An
 * MPI 8-byte latency between ranks on different cores cannot go below this one-way time, so
 * bench/mpi/run prints it beside latency_8B. Plain C and pthreads, no MPI.
 *
 * Each batch stops after kTrips round trips or kBatchSeconds, whichever comes first: on a loaded
 * machine a spinning partner that loses its core makes every trip a scheduler quantum, and the
 * program must still end with a figure (a high one) rather than be killed by the runner's timeout.
 *
 * usage: cacheline_floor; prints `RESULT latency_floor_8B <us> us`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kTrips = 1 << 20, kBatches = 5, kCheckEvery = 1 << 8 };
static const double kBatchSeconds = 2.0;

struct line {
  _Alignas(64) atomic_long value;
};
static struct line ping;
static struct line pong;

static int bind_to(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* The main thread's last counter: tells the echo thread to return. */
static const long kStop = -1;

static void* echo(void* unused) {
  (void)unused;
  /* Unbound, the figure means less, but the main thread still gets its answers. */
  (void)bind_to(1);
  long seen = 0;
  for (;;) {
    /* acquire/release: each side only needs to see the other's latest counter. */
    long value;
    while ((value = atomic_load_explicit(&ping.value, memory_order_acquire)) == seen) {
    }
    if (value == kStop) return NULL;
    seen = value;
    atomic_store_explicit(&pong.value, value, memory_order_release);
  }
}

static double seconds_since(const struct timespec* start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(void) {
  pthread_t thread;
  if (bind_to(0) != 0 || pthread_create(&thread, NULL, echo, NULL) != 0) {
    fprintf(stderr, "cacheline_floor: needs two cores (binding to cores 0 and 1 failed)\n");
    return 1;
  }
  double one_way[kBatches];
  long i = 0;
  for (int batch = 0; batch < kBatches; ++batch) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int trips = 0;
    while (trips < kTrips) {
      ++i;
      ++trips;
      atomic_store_explicit(&ping.value, i, memory_order_release);
      while (atomic_load_explicit(&pong.value, memory_order_acquire) != i) {
      }
      if (trips % kCheckEvery == 0 && seconds_since(&start) > kBatchSeconds) break;
    }
    one_way[batch] = seconds_since(&start) * 1e6 / (2.0 * trips);
  }
  atomic_store_explicit(&ping.value, kStop, memory_order_release);
  pthread_join(thread, NULL);
  qsort(one_way, kBatches, sizeof one_way[0], compare);
  printf("RESULT latency_floor_8B %.4g us\n", one_way[kBatches / 2]);
  return 0;
}
