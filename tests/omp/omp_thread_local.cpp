// C++ thread_local objects with a constructor and a destructor, used by OpenMP threads that share
// one core: each thread constructs its own object at its first use, keeps it across waits, and
// destroys it when the thread ends (not when its kernel thread does, which outlives it).
#include <omp.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

std::atomic<int> constructed{0};
std::atomic<int> destroyed{0};
int failures = 0;

struct Tracker {
  int owner = -1;
  Tracker() { constructed.fetch_add(1); }
  ~Tracker() { destroyed.fetch_add(1); }
};

thread_local Tracker tracker;

void check(bool ok, const char* what, int got, int expected) {
  if (ok) return;
  std::fprintf(stderr, "%s: got %d, expected %d\n", what, got, expected);
  ++failures;
}

}  // namespace

int main() {
  const char* text = std::getenv("OMP_NUM_THREADS");
  const int threads = text != nullptr ? std::atoi(text) : omp_get_num_procs();
  int wrong = 0;
#pragma omp parallel reduction(+ : wrong)
  {
    tracker.owner = omp_get_thread_num();
#pragma omp barrier
#pragma omp taskyield
    if (tracker.owner != omp_get_thread_num()) ++wrong;
  }
  check(wrong == 0, "threads that lost their thread_local object", wrong, 0);
  check(constructed.load() == threads, "objects constructed", constructed.load(), threads);
  // A region with another binding policy gets new workers (docs/omp_bridge.md): the first
  // region's workers end, and their objects with them; the master's stays.
#pragma omp parallel proc_bind(close)
  tracker.owner = omp_get_thread_num();
  check(destroyed.load() == threads - 1, "objects destroyed with their threads", destroyed.load(),
        threads - 1);
  if (failures != 0) std::fprintf(stderr, "omp_thread_local: %d failed checks\n", failures);
  return failures != 0;
}
