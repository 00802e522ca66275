#include "coll/pair_ring.h"

namespace weft::mpi::collective {

namespace {

// A Bcast root and a Reduce non-root write and return: they run ahead of the member that reads
// their slots, up to kSlots calls. The other kinds are exchanges, both members at the same call.
bool one_way(SlotKind kind) {
  return kind == SlotKind::bcast || kind == SlotKind::reduce;
}

}  // namespace

PairRing::Slot& PairRing::claim(int me, std::uint64_t call, SpinBudget& spin, const void* note) {
  Member& mine = members_[me];
  Slot& slot = mine.slots[call % kSlots];
  // relaxed: only this member writes its slots' numbers.
  const std::uint64_t held = slot.call.load(std::memory_order_relaxed);
  if (held <= mine.seen_consumed) return slot;
  publish(me);
  const Member& other = members_[1 - me];
  // acquire: the other member's reads of the slot happened before it counted it consumed, so
  // that this member's writes cannot reach them. seq_cst, as RingWaiter needs it of a look.
  mine.waiter.wait(spin, note, [&] {
    mine.seen_consumed = other.consumed.load(std::memory_order_seq_cst);
    return held <= mine.seen_consumed;
  });
  return slot;
}

void PairRing::post(int me, Slot& slot, std::uint64_t call) {
  // seq_cst (release at least: the reader, seeing the number, sees the header and payload):
  // see RingWaiter.
  slot.call.store(call + 1, std::memory_order_seq_cst);
  // Every slot's line crosses between the two cores at every call: read by the other member, then
  // written by this one kSlots calls later. In an exchange nobody reads this member's next slot
  // before it writes it, so its line is asked for now, while the other member reads this call's,
  // rather than when the next call stalls on it. A one-way writer's next slot is the one its
  // reader prefetches (await): asking for it would take it away again (measured: a Bcast of two
  // 8-byte members went from 72 to 83-108 ns a call with it, a Barrier of two 130 -> 105 ns).
  if (!one_way(slot.header.kind)) __builtin_prefetch(&members_[me].slots[(call + 1) % kSlots], 1);
  wake_other(me);
}

const PairRing::Slot* PairRing::await(int me, std::uint64_t call, SpinBudget& spin,
                                      const void* note) {
  // The slot cannot hold a later call than `call`: its writer waits for this member to consume
  // this one first.
  const Member& other = members_[1 - me];
  const Slot& slot = other.slots[call % kSlots];
  // acquire: pairs with the post's store; seen, the slot's header and payload are. A slot not
  // posted yet sends the caller to wait, after it has told its count.
  if (slot.call.load(std::memory_order_acquire) == call + 1) {
    // A one-way writer found here already ahead has most likely written the next slot too:
    // fetching it now overlaps its line's transfer with this call (a Bcast of two members of
    // 8 bytes: 85-92 -> 69-78 ns a call, where Open MPI's took 78-94). Not after a wait: the
    // writer is not ahead then, and the fetched line would be stale.
    if (one_way(slot.header.kind)) __builtin_prefetch(&other.slots[(call + 1) % kSlots]);
    return &slot;
  }
  publish(me);
  return await_slot(members_[me].waiter, spin, note, slot, other.nonblocking, call);
}

void PairRing::note_nonblocking(int me, std::uint64_t call) {
  // seq_cst: see RingWaiter.
  members_[me].nonblocking.store(call + 1, std::memory_order_seq_cst);
  wake_other(me);
}

void PairRing::consume(int me, std::uint64_t call) {
  Member& mine = members_[me];
  mine.unpublished = call + 1;
  if (++mine.pending == kPublishEvery) publish(me);
}

void PairRing::publish(int me) {
  Member& mine = members_[me];
  if (mine.pending == 0) return;
  mine.pending = 0;
  // seq_cst (release at least: the reads of the slots come before their reuse): see RingWaiter.
  mine.consumed.store(mine.unpublished, std::memory_order_seq_cst);
  wake_other(me);
}

}  // namespace weft::mpi::collective
