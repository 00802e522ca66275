#include "rma/local_copy.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>

#include "request/shared_copy.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft::mpi::rma {

namespace {

// Shared copies of the process's origins. A helper thread may start after the copy it was spawned
// for ended and even after its slot was taken again; it then finds nothing open, or helps the
// slot's next copy, so a slot lives as long as the process and is never handed to it by value.
struct Slot {
  // acquire on taking, release on giving back: the slot's run() is over before the next one.
  std::atomic<bool> busy{false};
  SharedCopy copy;
  // The copies the slot was taken for, and those that ended: a helper may start before the
  // origin opened its copy, so it helps until its copy ended rather than once. Changed by the
  // slot's holder only.
  std::uint64_t taken = 0;
  std::atomic<std::uint64_t> ended{0};
};
constexpr std::size_t kSlots = 16;

Slot* take_slot() {
  // Never destroyed: a helper thread may still run at exit.
  static auto* const slots = new std::array<Slot, kSlots>;
  for (Slot& slot : *slots) {
    if (!slot.busy.load(std::memory_order_relaxed) &&
        !slot.busy.exchange(true, std::memory_order_acquire)) {
      return &slot;
    }
  }
  return nullptr;
}

bool apart(const std::byte* a, const std::byte* b, std::size_t bytes) {
  // std::less: a total order on unrelated pointers.
  return std::less<>()(a + bytes - 1, b) || std::less<>()(b + bytes - 1, a);
}

}  // namespace

void move_large(std::byte* dst, const std::byte* src, std::size_t bytes) {
  Scheduler* scheduler = Scheduler::current();
  Slot* slot = nullptr;
  if (bytes < SharedCopy::min_bytes() || !apart(dst, src, bytes) || scheduler == nullptr ||
      scheduler->num_vps() < 2 || (slot = take_slot()) == nullptr) {
    std::memmove(dst, src, bytes);
    return;
  }
  // The helper starts on the next processor, which the spawn wakes when it sleeps (an idle core
  // then takes half the copy); where that processor is busy, the helper waits its turn or is
  // stolen, and finds the copy done, a spawn's cost wasted.
  ThreadAttr attr;
  attr.type = ThreadType::mpi_task;
  attr.rank = this_thread::rank();
  const int vp = this_thread::vp();
  attr.placement = Placement::free(vp < 0 ? 0 : (vp + 1) % scheduler->num_vps());
  const std::uint64_t mine = ++slot->taken;
  spawn(attr, [slot, mine] {
    // acquire: nothing to publish here (help() has its own order); only stops the loop. Each
    // round yields, so the processor's other threads run while the origin has not opened yet.
    while (slot->ended.load(std::memory_order_acquire) < mine) {
      slot->copy.help();
      this_thread::yield();
    }
  }).detach();
  slot->copy.run(dst, src, bytes);
  // release: pairs with the helper's acquire, for the end of its loop.
  slot->ended.store(mine, std::memory_order_release);
  slot->busy.store(false, std::memory_order_release);
}

}  // namespace weft::mpi::rma
