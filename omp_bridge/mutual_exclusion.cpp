// critical, atomic (the forms GCC cannot make one atomic instruction) and the omp_*_lock API.
#include <cstdint>
#include <cstring>

#include "gomp_abi.h"
#include "lock_word.h"
#include "omp.h"
#include "thread_state.h"
#include "weft/this_thread.h"

namespace weft::omp {
namespace {

// One word each for the unnamed critical section and the atomic fallback: process-wide, as in
// libgomp (ranks of one process contend on them, which is correct, only less parallel).
alignas(64) std::uintptr_t unnamed_critical = 0;
alignas(64) std::uintptr_t atomic_lock = 0;

// A named critical section's lock is the pointer-sized common symbol GCC emits for the name.
std::uintptr_t& critical_word(void** slot) {
  return *reinterpret_cast<std::uintptr_t*>(slot);
}

std::uint32_t& lock_of(omp_lock_t* lock) {
  static_assert(sizeof(omp_lock_t) == sizeof(std::uint32_t));
  return *reinterpret_cast<std::uint32_t*>(lock);
}

// omp_nest_lock_t's 16 bytes: the lock word, the depth, and the owning task.
struct NestLock {
  std::uint32_t word;
  int depth;
  const void* owner;
};
static_assert(sizeof(NestLock) == sizeof(omp_nest_lock_t));

NestLock& nest_of(omp_nest_lock_t* lock) {
  return *reinterpret_cast<NestLock*>(lock);
}

// A nestable lock is owned by a task (OpenMP's rule), not by a thread.
const void* owner() {
  return &self().task();
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void GOMP_critical_start() {
  lock_word(unnamed_critical);
}
void GOMP_critical_end() {
  unlock_word(unnamed_critical);
}
void GOMP_critical_name_start(void** slot) {
  lock_word(critical_word(slot));
}
void GOMP_critical_name_end(void** slot) {
  unlock_word(critical_word(slot));
}
void GOMP_atomic_start() {
  lock_word(atomic_lock);
}
void GOMP_atomic_end() {
  unlock_word(atomic_lock);
}

void omp_init_lock(omp_lock_t* lock) throw() {
  lock_of(lock) = 0;
}
void omp_init_lock_with_hint(omp_lock_t* lock, omp_sync_hint_t) throw() {
  omp_init_lock(lock);
}
void omp_destroy_lock(omp_lock_t* lock) throw() {
  lock_of(lock) = 0;
}
void omp_set_lock(omp_lock_t* lock) throw() {
  lock_word(lock_of(lock));
}
void omp_unset_lock(omp_lock_t* lock) throw() {
  unlock_word(lock_of(lock));
}
// A failed test yields once: a thread polling a lock in a loop must let the holder, perhaps on
// its own core, run (weft does not preempt).
int omp_test_lock(omp_lock_t* lock) throw() {
  if (try_lock_word(lock_of(lock))) return 1;
  weft::this_thread::yield();
  return 0;
}

void omp_init_nest_lock(omp_nest_lock_t* lock) throw() {
  nest_of(lock) = {0, 0, nullptr};
}
void omp_init_nest_lock_with_hint(omp_nest_lock_t* lock, omp_sync_hint_t) throw() {
  omp_init_nest_lock(lock);
}
void omp_destroy_nest_lock(omp_nest_lock_t* lock) throw() {
  nest_of(lock) = {0, 0, nullptr};
}
void omp_set_nest_lock(omp_nest_lock_t* lock) throw() {
  NestLock& nest = nest_of(lock);
  const void* me = owner();
  // Only the owner writes `owner` while it holds the word, so reading our own id back is exact.
  if (std::atomic_ref<const void*>(nest.owner).load(std::memory_order_relaxed) != me) {
    lock_word(nest.word);
    std::atomic_ref<const void*>(nest.owner).store(me, std::memory_order_relaxed);
  }
  ++nest.depth;
}
void omp_unset_nest_lock(omp_nest_lock_t* lock) throw() {
  NestLock& nest = nest_of(lock);
  if (--nest.depth == 0) {
    std::atomic_ref<const void*>(nest.owner).store(nullptr, std::memory_order_relaxed);
    unlock_word(nest.word);
  }
}
int omp_test_nest_lock(omp_nest_lock_t* lock) throw() {
  NestLock& nest = nest_of(lock);
  const void* me = owner();
  if (std::atomic_ref<const void*>(nest.owner).load(std::memory_order_relaxed) != me) {
    if (!try_lock_word(nest.word)) {
      weft::this_thread::yield();
      return 0;
    }
    std::atomic_ref<const void*>(nest.owner).store(me, std::memory_order_relaxed);
  }
  return ++nest.depth;
}

}  // extern "C"
