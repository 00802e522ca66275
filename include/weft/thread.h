// User-level threads of the weft scheduler: spawn, join, detach. A thread has a type, a priority
// (default priority.<type>), a placement and a stack size (default stack.<type>).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "weft/thread_type.h"

namespace weft {

namespace detail {
struct Fiber;
}

struct Placement {
  enum class Kind : std::uint8_t { free, numa, pinned };
  Kind kind = Kind::free;
  int index = -1;  // start VP for free (-1: the spawner's), node for numa, VP for pinned

  // Runs on any virtual processor and may be stolen by an idle one, nearest NUMA node first.
  static Placement free(int start_vp = -1) { return {Kind::free, start_vp}; }
  // Runs on any virtual processor of NUMA node `node`.
  static Placement numa(int node) { return {Kind::numa, node}; }
  // Runs on virtual processor `vp` only; never migrates.
  static Placement pinned(int vp) { return {Kind::pinned, vp}; }
};

struct ThreadAttr {
  ThreadType type = ThreadType::user;
  std::optional<int> priority;  // kMinPriority..kMaxPriority; default priority.<type>
  Placement placement;
  std::size_t stack_size = 0;  // bytes; 0 for stack.<type>
  int rank = -1;               // MPI rank named in diagnostics, -1 for none
  // Work-first spawn, for a helper the caller needs started before it goes on (the exchange of a
  // nonblocking collective): when spawned by a weft thread and placed where that thread's
  // processor may run it (free, or pinned to that processor), the new thread runs at once and the
  // caller resumes first when it stops. Otherwise the thread is queued as usual.
  bool run_at_once = false;
};

// Owns a spawned thread until it is joined or detached, like std::thread: destroying a joinable
// Thread ends the process with a diagnostic.
class Thread {
 public:
  Thread() noexcept = default;
  Thread(Thread&& other) noexcept;
  Thread& operator=(Thread&& other) noexcept;
  ~Thread();

  bool joinable() const noexcept { return fiber_ != nullptr; }
  // Waits for the thread to end. From a weft thread the caller parks; from any other kernel
  // thread it blocks that kernel thread.
  void join();
  void detach();
  std::uint64_t id() const noexcept;
  // Changes the thread's priority at once, even while it waits in a run queue.
  void set_priority(int priority);

 private:
  friend Thread spawn(const ThreadAttr&, std::function<void()>);
  explicit Thread(detail::Fiber* fiber) noexcept : fiber_(fiber) {}
  detail::Fiber* fiber_ = nullptr;
};

// Starts a thread on the running weft::Scheduler. Throws weft::Error when no scheduler runs or
// an attribute is out of range (naming it and what is expected).
Thread spawn(const ThreadAttr& attr, std::function<void()> body);
inline Thread spawn(std::function<void()> body) {
  return spawn(ThreadAttr{}, std::move(body));
}

}  // namespace weft
