#include "coll/pair_ring.h"

#include <string>

#include "coll/pair_call.h"
#include "init/fatal.h"

namespace weft::mpi::collective {

void pair_kind_mismatch(std::uint64_t call, std::string_view function, PairRing::Kind other) {
  const char* names[] = {"?", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather"};
  end_job("collective call " + std::to_string(call) + " of a communicator of two members: " +
          std::string(function) + " here, " + names[static_cast<int>(other)] +
          " at the other member (MPI-3.1 5.12: every member makes the same collective calls in "
          "the same order)");
}

template <class Ready>
void PairRing::wait(int me, SpinBudget& spin, Ready&& ready) {
  if (ready() || spin.spin_until(ready)) return;
  Member& mine = members_[me];
  // seq_cst: against wake_other's store (of a slot or a count) and load of `sleeping`: either
  // this member's next look sees what the other stored or the other sees it sleeping.
  mine.sleeping.store(true, std::memory_order_seq_cst);
  const std::int64_t parked_at = monotonic_ns();
  // A set left over from an earlier wait that ended without parking only costs one more look.
  while (!ready()) mine.wake.wait();
  spin.parked(monotonic_ns() - parked_at);
  // relaxed: a wake-up the other member still sends finds the event set for the next wait, which
  // then looks once more.
  mine.sleeping.store(false, std::memory_order_relaxed);
}

void PairRing::wake_other(int me) {
  Member& other = members_[1 - me];
  // seq_cst: see wait().
  if (other.sleeping.load(std::memory_order_seq_cst)) other.wake.set();
}

PairRing::Slot& PairRing::claim(int me, std::uint64_t call, SpinBudget& spin) {
  Member& mine = members_[me];
  Slot& slot = mine.slots[call % kSlots];
  // relaxed: only this member writes its slots' numbers.
  const std::uint64_t held = slot.call.load(std::memory_order_relaxed);
  if (held <= mine.seen_consumed) return slot;
  const Member& other = members_[1 - me];
  // acquire: the other member's reads of the slot happened before it counted it consumed, so
  // that this member's writes cannot reach them. seq_cst, as wait() needs it of a look.
  wait(me, spin, [&] {
    mine.seen_consumed = other.consumed.load(std::memory_order_seq_cst);
    return held <= mine.seen_consumed;
  });
  return slot;
}

void PairRing::post(int me, Slot& slot, std::uint64_t call) {
  // seq_cst (release at least: the reader, seeing the number, sees the header and payload):
  // see wait().
  slot.call.store(call + 1, std::memory_order_seq_cst);
  wake_other(me);
}

const PairRing::Slot& PairRing::await(int me, std::uint64_t call, SpinBudget& spin) {
  const Slot& slot = members_[1 - me].slots[call % kSlots];
  // seq_cst (acquire at least: pairs with post's release): see wait(). The slot cannot hold a
  // later call than `call`: its writer waits for this member to consume this one first.
  wait(me, spin, [&] { return slot.call.load(std::memory_order_seq_cst) == call + 1; });
  return slot;
}

void PairRing::consume(int me, std::uint64_t call) {
  // seq_cst (release at least: the reads of the slot come before its reuse): see wait().
  members_[me].consumed.store(call + 1, std::memory_order_seq_cst);
  wake_other(me);
}

}  // namespace weft::mpi::collective
