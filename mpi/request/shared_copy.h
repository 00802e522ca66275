// A large copy inside the process that more than one core works on (docs/mpi-pt2pt.md, "Large
// copies shared by two cores"). Its initiator, the thread that would have made the copy alone,
// splits it into chunks claimed one at a time from an atomic counter; a thread that waits for the
// copy's end (the other side of a message, in MPI_Wait or MPI_Recv) claims chunks too instead of
// idling, and is woken for it when it had parked. The copy is done when the initiator has no
// chunk left to claim and every helper has left.
//
// A SharedCopy lives in the object the waiter waits on (a request, the engine's receive slot), so
// a helper never touches anything that may go away under it: the initiator returns from run()
// only after the last helper left, and it completes the waiter's completion after that.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "datatype/datatype.h"
#include "request/completion.h"

namespace weft::mpi {

class SharedCopy {
 public:
  // Shorter copies are one memcpy by their initiator (mpi.shared_copy_min, this by default): two
  // cores copy 256 KiB only about 4 us faster than one here (docs/mpi.md, "Large copies shared by
  // two cores"), and a helper that spins, or is woken, notices an open copy a few microseconds
  // late.
  static constexpr std::size_t kDefaultMinBytes = std::size_t{256} << 10;
  // The job's mpi.shared_copy_min, set at its start.
  static void set_min_bytes(std::size_t bytes) noexcept;
  static std::size_t min_bytes() noexcept;
  // What one claim copies: in L2 twice (source and destination), several per core at the default
  // minimum so that the last one leaves the cores little imbalance, and a claim's atomic small
  // beside it.
  static constexpr std::size_t kChunkBytes = std::size_t{64} << 10;

  SharedCopy() = default;
  SharedCopy(const SharedCopy&) = delete;
  SharedCopy& operator=(const SharedCopy&) = delete;

  // By the initiator, one copy at a time per object: copies `bytes` from `src` to `dst` (apart),
  // in chunks that helpers may take. Returns when all of `dst` is written, visible to this thread.
  void run(void* dst, const void* src, std::size_t bytes) noexcept;

  // By another thread: copies chunks of the copy running now, if any, until none is left to
  // claim. Never waits for anything, so it cannot keep its caller longer than its chunks.
  void help() noexcept;

  // Waits for `completion`, which the thread that runs this object's copies completes after its
  // copy: spins as wait(Completion&, SpinBudget&) does, helping the copy that runs meanwhile, and
  // when it parks, asks the next run() to wake it to help.
  void wait(Completion& completion, SpinBudget& budget);

 private:
  // state_: bit 0 while a copy is open to helpers, above it twice the number of helpers inside.
  static constexpr std::uintptr_t kOpen = 1, kHelper = 2;
  void copy_chunks() noexcept;

  // The copy, written by run() while no helper is inside and published by its opening of state_.
  std::byte* dst_ = nullptr;
  const std::byte* src_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t chunks_ = 0;
  // relaxed: the next chunk to claim; it only hands out indices, the copy's fields come with
  // state_.
  std::atomic<std::size_t> next_{0};
  std::atomic<std::uintptr_t> state_{0};
  // A waiter parked on the completion that wants to help: run() takes it and notifies it once.
  std::atomic<Parker*> sleeper_{nullptr};
};

// copy() of datatype.h, shared through `shared` when it is worth it: both sides contiguous, at
// least SharedCopy::min_bytes(), the buffers apart. Any other copy is made here alone.
std::size_t copy(SharedCopy& shared, const void* src, std::size_t src_count,
                 const Datatype& src_type, void* dst, std::size_t dst_count,
                 const Datatype& dst_type);

}  // namespace weft::mpi
