#include "request/shared_copy.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <thread>

#include "weft/detail/spin_lock.h"

namespace weft::mpi {

namespace {
// relaxed: set before the job's ranks start, read by their copies.
std::atomic<std::size_t> min_shared_bytes{SharedCopy::kDefaultMinBytes};
}  // namespace

void SharedCopy::set_min_bytes(std::size_t bytes) noexcept {
  min_shared_bytes.store(bytes, std::memory_order_relaxed);
}

std::size_t SharedCopy::min_bytes() noexcept {
  return min_shared_bytes.load(std::memory_order_relaxed);
}

void SharedCopy::copy_chunks() noexcept {
  for (;;) {
    const std::size_t chunk = next_.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= chunks_) return;
    const std::size_t offset = chunk * kChunkBytes;
    std::memcpy(dst_ + offset, src_ + offset, std::min(kChunkBytes, bytes_ - offset));
  }
}

void SharedCopy::run(void* dst, const void* src, std::size_t bytes) noexcept {
  dst_ = static_cast<std::byte*>(dst);
  src_ = static_cast<const std::byte*>(src);
  bytes_ = bytes;
  chunks_ = (bytes + kChunkBytes - 1) / kChunkBytes;
  next_.store(0, std::memory_order_relaxed);
  // seq_cst: its release half publishes the fields above to the helpers that enter (help()'s
  // acquire); seq_cst with wait()'s store of sleeper_ and load of state_, so that either this
  // sees the parked waiter below or the waiter sees the copy open.
  state_.fetch_or(kOpen, std::memory_order_seq_cst);
  // The Parker stays valid: its owner drains this notification before it leaves wait().
  if (Parker* sleeper = sleeper_.exchange(nullptr, std::memory_order_seq_cst)) sleeper->notify();
  copy_chunks();
  // relaxed: every chunk is claimed; a helper that enters from now on finds the copy closed and
  // leaves without touching it.
  state_.fetch_and(~kOpen, std::memory_order_relaxed);
  // acquire: pairs with the release of each helper's leaving, so its chunks are written. A helper
  // still inside is copying its last chunk: bounded, but its kernel thread may have lost its core
  // on a loaded host, hence the yield to the system after a while.
  for (unsigned round = 1; state_.load(std::memory_order_acquire) != 0; ++round) {
    if (round % 1024 == 0) {
      std::this_thread::yield();
    } else {
      detail::spin_pause();
    }
  }
}

void SharedCopy::help() noexcept {
  // relaxed: only a cheap first look; the fetch_add below decides.
  if ((state_.load(std::memory_order_relaxed) & kOpen) == 0) return;
  // acquire: pairs with run()'s opening, so the copy's fields are visible.
  if ((state_.fetch_add(kHelper, std::memory_order_acquire) & kOpen) == 0) {
    // relaxed: this helper touched nothing.
    state_.fetch_sub(kHelper, std::memory_order_relaxed);
    return;
  }
  copy_chunks();
  // release: the chunks copied here are visible to run() once it sees the count drop.
  state_.fetch_sub(kHelper, std::memory_order_release);
}

void SharedCopy::wait(Completion& completion, SpinBudget& budget) {
  if (completion.done() || budget.spin_until([&] {
        help();
        return completion.done();
      })) {
    return;
  }
  Parker parker;
  if (!completion.arm(&parker)) return;
  const std::int64_t parked_at = monotonic_ns();
  // Notifications the Parker will get: the completion's, and run()'s when it takes the Parker.
  std::uint32_t expected = 1;
  bool offered = true;
  // seq_cst, with run()'s opening of state_ and taking of sleeper_: a copy that opens after the
  // load below sees the Parker.
  sleeper_.store(&parker, std::memory_order_seq_cst);
  if ((state_.load(std::memory_order_seq_cst) & kOpen) != 0) {
    offered = false;
    if (sleeper_.exchange(nullptr, std::memory_order_seq_cst) == &parker) {
      help();
    } else {
      expected = 2;  // run() took it meanwhile
    }
  }
  for (std::uint32_t seen = 0; !completion.done();) {
    seen = parker.wait_beyond(seen);
    // Woken by run(): the copy is open.
    if (!completion.done()) help();
  }
  if (offered && sleeper_.exchange(nullptr, std::memory_order_seq_cst) != &parker) expected = 2;
  parker.drain(expected);
  budget.parked(monotonic_ns() - parked_at);
}

std::size_t copy(SharedCopy& shared, const void* src, std::size_t src_count,
                 const Datatype& src_type, void* dst, std::size_t dst_count,
                 const Datatype& dst_type) {
  const std::size_t bytes = std::min(src_count * src_type.size(), dst_count * dst_type.size());
  if (bytes < SharedCopy::min_bytes() || !src_type.contiguous() || !dst_type.contiguous()) {
    return copy(src, src_count, src_type, dst, dst_count, dst_type);
  }
  const auto* from = static_cast<const std::byte*>(src) + src_type.true_lb();
  auto* to = static_cast<std::byte*>(dst) + dst_type.true_lb();
  // std::less: a total order on unrelated pointers.
  if (!std::less<>()(from + bytes - 1, to) && !std::less<>()(to + bytes - 1, from)) {
    return copy(src, src_count, src_type, dst, dst_count, dst_type);
  }
  shared.run(to, from, bytes);
  return bytes;
}

}  // namespace weft::mpi
