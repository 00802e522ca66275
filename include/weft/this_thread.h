// Operations on the calling thread. Inside a weft thread they act on the user-level thread and
// never block its kernel thread; on any other kernel thread they fall back to the OS equivalent.
//
// The current thread and virtual processor are read through these functions on every call: a
// user thread may resume on another kernel thread after any blocking call, so an address of a
// kernel thread's thread_local that the compiler cached before the call would be stale.
#pragma once

#include <chrono>
#include <cstdint>

#include "weft/detail/yield.h"
#include "weft/thread_type.h"

namespace weft::this_thread {

bool is_weft_thread();
std::uint64_t id();  // 0 outside weft
ThreadType type();   // ThreadType::user outside weft
int vp();            // virtual processor now running the caller, -1 outside weft
// -1 when the thread has none. A kernel thread outside weft has the rank of the thread that
// started it (pthread_create, std::thread, thrd_create).
int rank();
int priority();
// Sets the priority the thread runs at and returns to when unboosted.
void set_priority(int priority);
// A progress thread boosts itself while it holds work: boosted, it runs at
// priority.progress_boost (if that is above its own priority); unboosted, at its own again.
void set_boosted(bool boosted);

// One word of storage per thread for a runtime built on weft (the OpenMP bridge keeps its
// per-thread state there). Unlike a thread_local it stays with a user thread that moves to another
// kernel thread. `destroy`, when given, runs in the thread once its body has returned (it may
// block). Outside weft the slot belongs to the kernel thread and `destroy` runs when it exits.
void* local_data();
void set_local_data(void* data, void (*destroy)(void*) = nullptr);

// How many turns other user threads had before the caller resumed (0 when none ran); always 0
// outside weft, where the kernel does not tell. Inline: see weft/detail/yield.h.
inline std::uint64_t yield() {
  detail::PreparedYield prepared;
  detail::prepare_yield(prepared);
  if (prepared.to == nullptr) return prepared.turns;
  return detail::finish_yield(prepared, detail::switch_context(prepared.to, prepared.record));
}
void sleep_for(std::chrono::nanoseconds duration);
void sleep_until(std::chrono::steady_clock::time_point deadline);

}  // namespace weft::this_thread
