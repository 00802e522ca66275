// One member's blocking collective through its communicator's ring of call slots: the pair ring
// of two members (mpi/coll/pair_ring.h) or the fan ring of up to FanRing::kMaxMembers
// (mpi/coll/fan_ring.h), for a small payload. The call's number and the caller's spin budget,
// looked up once, and the note a deadlock report reads while the call waits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "coll/collective.h"
#include "coll/fan_ring.h"
#include "coll/numa_staging.h"
#include "coll/pair_ring.h"
#include "comm/communicator.h"
#include "diagnostics/blocked_call.h"
#include "init/world.h"

namespace weft::mpi::collective {

// Whether a blocking collective moving `bytes` per member on `comm` (an intracommunicator whose
// members are all in this process) goes through the pair ring. Every member decides alike when
// the members' signatures match, as MPI requires.
inline bool takes_pair_ring(const Comm& comm, std::size_t bytes) {
  return comm.size() == 2 && bytes <= PairRing::kPayload;
}

// The same for a Bcast or Reduce of more members through the fan ring; one that the NUMA staging
// would take (mpi.coll_numa = staged) keeps to it.
inline bool takes_fan_ring(const Comm& comm, std::size_t bytes) {
  return comm.size() > 2 && comm.size() <= FanRing::kMaxMembers && bytes <= kSlotPayload &&
         !numa::considered(comm, bytes);
}

// The caller's nonblocking collective call (or persistent init) `call` on `comm`, an
// intracommunicator of members in this process: a member that waits in the communicator's ring
// for its slot of that call ends the job (the calls do not match) instead of waiting for good.
void note_nonblocking_call(Comm& comm, std::uint64_t call);

// Ends the job: the other member's call `call` is of another kind than the caller's
// (`function`), or meets elsewhere.
[[noreturn]] void ring_kind_mismatch(std::uint64_t call, std::string_view function, SlotKind other);

// Where `block`'s data lies when its type is contiguous (one run of block.bytes() bytes from the
// address plus the type's true lower bound), else nullptr. A ring's copy of such a block (nearly
// every small call) is then one memcpy, where collective::transfer asks the datatype engine for
// both sides' layouts and sizes again.
inline std::byte* flat_data(const Block& block) {
  if (!block.type->contiguous()) return nullptr;
  return static_cast<std::byte*>(block.address) + block.type->true_lb();
}

// Packs the first `bytes` bytes of `from`'s data (at most from.bytes()) into a slot's payload.
inline void pack_into_slot(const Block& from, std::size_t bytes, std::byte* payload) {
  if (const std::byte* data = flat_data(from)) {
    if (bytes > 0) std::memcpy(payload, data, bytes);
    return;
  }
  transfer(from, Block{payload, bytes, MPI_BYTE});
}

// Unpacks `bytes` packed bytes of a slot's payload into `to`, of `to_bytes` bytes (to.bytes()):
// as many as fit.
inline void unpack_slot(const std::byte* payload, std::size_t bytes, const Block& to,
                        std::size_t to_bytes) {
  if (std::byte* data = flat_data(to)) {
    const std::size_t fits = std::min(bytes, to_bytes);
    if (fits > 0) std::memcpy(data, payload, fits);
    return;
  }
  transfer(Block{const_cast<std::byte*>(payload), bytes, MPI_BYTE}, to);
}

// What a call through either ring knows of itself.
class RingCall {
 public:
  int rank() const { return rank_; }

 protected:
  RingCall(Comm* comm, std::string_view function, int world_rank)
      : meetings_(comm->meetings),
        rank_(comm->rank_of(world_rank)),
        spin_(world()->rank(world_rank).spin),
        // Not in the meeting ring: the call takes no place there (CallNumber).
        call_(comm->locals[comm->rank_of_world[world_rank]].next_call(false).call),
        blocked_(blocked(comm, function, call_)),
        function_(function) {}

  // Ends the job unless `slot` is there (not a nonblocking call's place) and of kind `kind`.
  const CallSlot& checked(const CallSlot* slot, SlotKind kind) const {
    if (slot == nullptr) meetings_.out_of_order(call_, function_);
    if (slot->header.kind != kind) ring_kind_mismatch(call_, function_, slot->header.kind);
    return *slot;
  }

  MeetingTable& meetings_;
  const int rank_;
  SpinBudget& spin_;  // the caller's rank's
  const std::uint64_t call_;
  // What the call waits in, for the stack dump and the deadlock report: on the thread only while
  // the call parks in the ring (RingWaiter::wait).
  const BlockedCall blocked_;

 private:
  static BlockedCall blocked(Comm* comm, std::string_view function, std::uint64_t number) {
    BlockedCall call = blocked_in(BlockedCall::Kind::collective, function, comm, MPI_PROC_NULL, 0);
    call.collective = number;
    return call;
  }
  const std::string_view function_;
};

class PairCall : public RingCall {
 public:
  PairCall(Comm* comm, std::string_view function)
      : PairCall(comm, function, weft::mpi::caller_world_rank()) {}
  // For a caller of world rank `world_rank` (caller_world_rank(), looked up once for the call).
  PairCall(Comm* comm, std::string_view function, int world_rank)
      : RingCall(comm, function, world_rank), ring_(comm->meetings.pair_ring()) {}

  PairRing::Slot& claim() { return ring_.claim(rank_, call_, spin_, &blocked_); }
  void post(PairRing::Slot& slot) { ring_.post(rank_, slot, call_); }
  // The other member's slot of this call, of kind `kind` (else ends the job).
  const PairRing::Slot& await(PairRing::Kind kind) {
    return checked(ring_.await(rank_, call_, spin_, &blocked_), kind);
  }
  void consume() { ring_.consume(rank_, call_); }
  // As FanCall's, for code written for both rings: the other member is the only one to read.
  const PairRing::Slot& await(int /*from*/, PairRing::Kind kind) { return await(kind); }
  void finish(SlotKind /*kind*/, int /*root*/) { consume(); }

 private:
  PairRing& ring_;
};

class FanCall : public RingCall {
 public:
  FanCall(Comm* comm, std::string_view function)
      : FanCall(comm, function, weft::mpi::caller_world_rank()) {}
  FanCall(Comm* comm, std::string_view function, int world_rank)
      : RingCall(comm, function, world_rank), ring_(comm->meetings.fan_ring(comm->size())) {}

  // The caller's slot of this call, to fill (header.kind and header.root first) and post().
  CallSlot& claim() { return ring_.claim(rank_, call_, spin_, &blocked_); }
  void post(CallSlot& slot) { ring_.post(rank_, slot, call_); }
  // Member `from`'s slot of this call, of kind `kind` (else ends the job).
  const CallSlot& await(int from, SlotKind kind) {
    return checked(ring_.await(rank_, from, call_, spin_, &blocked_), kind);
  }
  // After the caller has read every slot it reads in this call.
  void finish(SlotKind kind, int root) { ring_.finish(rank_, call_, kind, root); }

 private:
  FanRing& ring_;
};

}  // namespace weft::mpi::collective
