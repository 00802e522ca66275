// A slot of a ring of collective call slots (mpi/coll/pair_ring.h, mpi/coll/fan_ring.h): the
// payload of one member's part in one small collective call, with what the members that read it
// need to check the signatures and reduce.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "mpi.h"

namespace weft::mpi::collective {

// Slots a member owns, one per call number modulo this: a member that sends may run this many
// calls ahead of the members that read its slots.
inline constexpr int kCallSlots = 8;
// Payloads up to this size take a ring (every member decides on its own size, which a correct
// program gives them alike).
inline constexpr std::size_t kSlotPayload = 256;

// gather, scatter and alltoall only name the pair queue's calls (mpi/coll/pair_nbc.h).
enum class SlotKind : std::uint32_t {
  bcast = 1,
  reduce,
  allreduce,
  allgather,
  barrier,
  gather,
  scatter,
  alltoall
};

struct SlotHeader {
  SlotKind kind = SlotKind::bcast;
  int root = 0;
  std::size_t count = 0;  // elements of `type`
  std::size_t bytes = 0;  // of payload: count * size of type
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

struct alignas(64) CallSlot {
  // Call number + 1 of the call whose payload the slot holds; 0 before the first.
  std::atomic<std::uint64_t> call{0};
  SlotHeader header;
  alignas(16) std::byte payload[kSlotPayload];
};

}  // namespace weft::mpi::collective
