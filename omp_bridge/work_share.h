// Worksharing constructs (loops, sections, single) of a team. Threads meet the constructs of a
// region in the same order, so the k-th construct a thread meets is the team's k-th; it lives in
// slot k % kWorkShareSlots of a ring, which lets threads that finished a `nowait` construct go on
// to the next ones while slower threads are still in it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "icv.h"
#include "signal.h"

namespace weft::omp {

// An iteration space of `count` iterations: iteration i is start + i * incr, computed modulo 2^64
// so that one representation serves the signed (long) and unsigned long long entry points.
struct IterationSpace {
  std::uint64_t start = 0;
  std::uint64_t incr = 1;
  std::uint64_t count = 0;

  static IterationSpace of_long(long start, long end, long incr);
  static IterationSpace of_ull(bool up, unsigned long long start, unsigned long long end,
                               unsigned long long incr);
  std::uint64_t at(std::uint64_t i) const { return start + i * incr; }
};

class WorkShare {
 public:
  // Loop state, written by the thread that initializes the construct, read-only after.
  IterationSpace space;
  ScheduleKind kind = ScheduleKind::static_;
  std::uint64_t chunk = 0;  // 0: static without a chunk
  // The SIMD width of LLVM's simd schedules: static shares and guided chunks are rounded up to a
  // multiple of it (only the last may be shorter). 1 otherwise.
  std::uint64_t multiple = 1;
  bool ordered = false;

  // The next iteration a dynamic, guided or sections construct hands out.
  std::atomic<std::uint64_t> next{0};
  // Ordered loops: the first iteration of the chunk whose ordered regions may run now.
  std::atomic<std::uint64_t> ordered_next{0};
  // single copyprivate: the executing thread's data, published once `copy_ready` is set.
  void* copy = nullptr;
  std::atomic<bool> copy_ready{false};
  std::atomic<bool> cancelled{false};
  // Task reductions of the construct: the initializer's registration, whose copies the other
  // threads use (task_reduction.h).
  std::uintptr_t* task_reductions = nullptr;
  // GCC's `mem` request (lastprivate(conditional), inscan): zeroed bytes shared by the team's
  // threads for the construct's length. Kept across constructs so that its capacity is reused.
  std::vector<std::byte> shared_memory;
  // Doacross loops (ordered(n)): the iteration counts of the n loops, and for each iteration of
  // the first (the one shared out) 1 + the flattened index of the inner iterations posted so far
  // (they are posted in order: one thread runs the inner loops of an outer iteration).
  std::vector<std::uint64_t> doacross_counts;
  std::unique_ptr<std::atomic<std::uint64_t>[]> doacross_posted;
  // LLVM's tree reductions (__kmpc_reduce*): each thread's private data, sized by the
  // initializer; thread 0 combines them once all `reduce_arrived`, then sets `reduce_done`.
  std::vector<void*> reduce_data;
  std::atomic<int> reduce_arrived{0};
  std::atomic<bool> reduce_done{false};

  // Makes the slot serve construct `index` first.
  void reset(std::uint64_t index);
  // Waits (on the team's `signal`) until the slot serves construct `index`, and returns true in
  // the one thread that must initialize it, which then calls published(); the others return once
  // it has.
  bool enter(std::uint64_t index, Signal& signal);
  void published(Signal& signal);
  // Called once by each of the team's threads: the last one frees the slot for construct
  // index + kWorkShareSlots.
  void leave(int team_size, Signal& signal);

 private:
  std::atomic<std::uint64_t> serving_{0};
  std::atomic<int> init_{0};  // 0 not initialized, 1 being initialized, 2 ready
  std::atomic<int> left_{0};
};

inline constexpr int kWorkShareSlots = 8;

}  // namespace weft::omp
