#include "coll/fan_ring.h"

namespace weft::mpi::collective {

FanRing::FanRing(int size)
    : size_(size),
      members_(std::make_unique<Member[]>(static_cast<std::size_t>(size))),
      row_lines_((size + 7) / 8),
      seen_(std::make_unique<Line[]>(static_cast<std::size_t>(size) * row_lines_)) {}

bool FanRing::finished(int me, int other, std::uint64_t held) {
  std::uint64_t& seen = this->seen(me, other);
  if (seen >= held) return true;
  // acquire: the reader's reads of the slot happened before it counted the call finished, so
  // that the writer's next payload cannot reach them. seq_cst, as RingWaiter needs it of a look.
  seen = members_[other].finished.load(std::memory_order_seq_cst);
  return seen >= held;
}

bool FanRing::readers_done(int me, const CallSlot& slot, std::uint64_t held) {
  if (slot.header.kind != SlotKind::bcast) return finished(me, slot.header.root, held);
  for (int other = 0; other < size_; ++other) {
    if (other != me && !finished(me, other, held)) return false;
  }
  return true;
}

CallSlot& FanRing::claim(int me, std::uint64_t call, SpinBudget& spin, const void* note) {
  CallSlot& slot = members_[me].slots[call % kCallSlots];
  // relaxed: only this member writes its slots.
  const std::uint64_t held = slot.call.load(std::memory_order_relaxed);
  if (held == 0 || readers_done(me, slot, held)) return slot;
  members_[me].waiter.wait(spin, note, [&] { return readers_done(me, slot, held); });
  return slot;
}

void FanRing::post(int me, CallSlot& slot, std::uint64_t call) {
  // seq_cst (release at least: a reader, seeing the number, sees the header and payload): see
  // RingWaiter.
  slot.call.store(call + 1, std::memory_order_seq_cst);
  if (slot.header.kind != SlotKind::bcast) {
    members_[slot.header.root].waiter.wake();
    return;
  }
  for (int other = 0; other < size_; ++other) {
    if (other != me) members_[other].waiter.wake();
  }
}

const CallSlot* FanRing::await(int me, int from, std::uint64_t call, SpinBudget& spin,
                               const void* note) {
  // The slot cannot hold a later call: its writer waits for this member to finish this one first.
  const Member& writer = members_[from];
  return await_slot(members_[me].waiter, spin, note, writer.slots[call % kCallSlots],
                    writer.nonblocking, call);
}

void FanRing::note_nonblocking(int me, std::uint64_t call) {
  // seq_cst: see RingWaiter.
  members_[me].nonblocking.store(call + 1, std::memory_order_seq_cst);
  for (int other = 0; other < size_; ++other) {
    if (other != me) members_[other].waiter.wake();
  }
}

void FanRing::finish(int me, std::uint64_t call, SlotKind kind, int root) {
  // seq_cst (release at least: the reads of the slots come before their reuse): see RingWaiter.
  members_[me].finished.store(call + 1, std::memory_order_seq_cst);
  if (kind == SlotKind::bcast) {
    members_[root].waiter.wake();
    return;
  }
  for (int other = 0; other < size_; ++other) {
    if (other != me) members_[other].waiter.wake();
  }
}

}  // namespace weft::mpi::collective
