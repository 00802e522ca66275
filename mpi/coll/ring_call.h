// One member's blocking Bcast, Reduce, Allreduce or Allgather through its communicator's PairRing
// (two members inside the process, a small payload): the call's number and the caller's spin
// budget, looked up once, and the note a deadlock report reads while the call waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

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

// Ends the job: the other member's call `call` is of another kind than the caller's
// (`function`), or meets elsewhere.
[[noreturn]] void pair_kind_mismatch(std::uint64_t call, std::string_view function,
                                     PairRing::Kind other);

class PairCall {
 public:
  PairCall(Comm* comm, std::string_view function)
      : PairCall(comm, function, weft::mpi::caller_world_rank()) {}

  int rank() const { return rank_; }
  PairRing::Slot& claim() { return ring_.claim(rank_, call_, spin_); }
  void post(PairRing::Slot& slot) { ring_.post(rank_, slot, call_); }
  // The other member's slot of this call, of kind `kind` (else ends the job).
  const PairRing::Slot& await(PairRing::Kind kind) {
    const PairRing::Slot& slot = ring_.await(rank_, call_, spin_);
    if (slot.header.kind != kind) pair_kind_mismatch(call_, function_, slot.header.kind);
    return slot;
  }
  void consume() { ring_.consume(rank_, call_); }

 private:
  PairCall(Comm* comm, std::string_view function, int world_rank)
      : rank_(comm->rank_of(world_rank)),
        spin_(world()->rank(world_rank).spin),
        // Not in the meeting ring: the call takes no place there (CallNumber).
        call_(comm->locals[comm->rank_of_world[world_rank]].next_call(false).call),
        function_(function),
        blocked_(blocked(comm, function, call_)),
        scope_(blocked_),
        ring_(comm->meetings.pair_ring()) {}

  static BlockedCall blocked(Comm* comm, std::string_view function, std::uint64_t number) {
    BlockedCall call = blocked_in(BlockedCall::Kind::collective, function, comm, MPI_PROC_NULL, 0);
    call.collective = number;
    return call;
  }
  const int rank_;
  SpinBudget& spin_;  // the caller's rank's
  const std::uint64_t call_;
  const std::string_view function_;
  const BlockedCall blocked_;
  const BlockedScope scope_;
  PairRing& ring_;
};

}  // namespace weft::mpi::collective
