// Allgather and alltoall between processes in two levels (see collective_hierarchy.cpp): every
// head sends each other head one bundle of its group's blocks for that group, and the members
// copy the blocks of their own group straight from one another's buffers meanwhile.
#include <deque>
#include <vector>

#include "coll/bundle.h"
#include "coll/collective_spanning.h"
#include "coll/group_meeting.h"
#include "coll/spanning_exchange.h"

namespace weft::mpi::spanning {

namespace {

using collective::Block;
using collective::Blocks;

// A member's side of an allgather.
struct AllgatherSide {
  Block contribution;  // its send block, or its own block of recv in place
  const Blocks* recv;
  // The head's: the bundles of the other groups, by group, and their sizes.
  std::vector<std::vector<char>> incoming;
  std::vector<std::size_t> received;
};

// A member's side of an alltoall.
struct AlltoallSide {
  Blocks send;  // a packed copy of what goes out, in place
  const Blocks* recv;
  SharedFailure failure;  // of a block the head unpacked for the member
};

// The head's exchange of an allgather: its group's contributions to every other head, theirs
// into `side.incoming`.
int exchange_contributions(MPI_Comm comm, int tag, GroupMeeting& group, const Blocks& recv,
                           AllgatherSide& side) {
  std::vector<Block> ours;
  for (int r : group.ranks()) ours.push_back(group.of<AllgatherSide>(r).contribution);
  const std::vector<char> outgoing = Bundle::pack(ours);
  const auto groups = static_cast<std::size_t>(group.count());
  side.incoming.resize(groups);
  side.received.resize(groups);
  std::vector<std::size_t> receipts(groups);
  Exchange exchange(comm, tag);
  for (int h = 0; h < group.count(); ++h) {
    if (h == group.group()) continue;
    std::vector<Block> theirs;
    for (int r : group.ranks_of(h)) theirs.push_back(recv.at(r));
    side.incoming[h].resize(Bundle::capacity(theirs));
    receipts[h] =
        exchange.receive(group.head(h), side.incoming[h].data(), side.incoming[h].size(), MPI_BYTE);
    exchange.send(group.head(h), outgoing.data(), outgoing.size(), MPI_BYTE);
  }
  const int rc = exchange.wait();
  for (int h = 0; h < group.count(); ++h) {
    if (h != group.group()) side.received[h] = exchange.received(receipts[h]);
  }
  // A bundle cut short by an oversized block: each member finds out what it lacks as it unpacks.
  return rc == MPI_ERR_TRUNCATE ? MPI_SUCCESS : rc;
}

// The head's exchange of an alltoall: to each other group the blocks its members send to that
// group's members, member by member; what comes back it unpacks into its members' buffers.
int exchange_blocks(MPI_Comm comm, int tag, GroupMeeting& group) {
  const std::vector<int>& ours = group.ranks();
  const auto groups = static_cast<std::size_t>(group.count());
  std::vector<std::vector<char>> incoming(groups);
  std::vector<std::size_t> receipts(groups);
  std::deque<std::vector<char>> outgoing;
  Exchange exchange(comm, tag);
  for (int h = 0; h < group.count(); ++h) {
    if (h == group.group()) continue;
    std::vector<Block> out;
    std::vector<Block> in;
    for (int i : ours) {
      for (int j : group.ranks_of(h)) out.push_back(group.of<AlltoallSide>(i).send.at(j));
    }
    for (int i : group.ranks_of(h)) {
      for (int j : ours) in.push_back(group.of<AlltoallSide>(j).recv->at(i));
    }
    incoming[h].resize(Bundle::capacity(in));
    receipts[h] = exchange.receive(group.head(h), incoming[h].data(), incoming[h].size(), MPI_BYTE);
    outgoing.push_back(Bundle::pack(out));
    exchange.send(group.head(h), outgoing.back().data(), outgoing.back().size(), MPI_BYTE);
  }
  // A bundle cut short by an oversized block fails only the members whose blocks did not
  // arrive whole or fit; the others get theirs.
  const int rc = exchange.wait();
  for (int h = 0; h < group.count(); ++h) {
    if (h == group.group()) continue;
    const std::vector<int>& theirs = group.ranks_of(h);
    Bundle bundle(incoming[h].data(), exchange.received(receipts[h]), theirs.size() * ours.size());
    for (int i : theirs) {
      for (int j : ours) {
        const AlltoallSide& side = group.of<AlltoallSide>(j);
        if (int unpacked = bundle.unpack_next(side.recv->at(i)); unpacked != MPI_SUCCESS) {
          side.failure.report(unpacked);
        }
      }
    }
  }
  return rc == MPI_ERR_TRUNCATE ? MPI_SUCCESS : rc;
}

}  // namespace

int allgather(const Block& send, const Blocks& recv, MPI_Comm comm, int tag) {
  GroupMeeting group(comm, tag);
  const int me = group.me();
  const int head = group.head(group.group());
  AllgatherSide side{send.address != nullptr ? send : recv.at(me), &recv, {}, {}};
  group.publish(&side);
  group.phase();
  if (me == head) group.tell(exchange_contributions(comm, tag, group, recv, side));
  group.phase();
  int rc = group.told();
  if (rc == MPI_SUCCESS) {
    for (int r : group.ranks()) {
      if (r != me)
        rc = first_failure(rc, copy_block(group.of<AllgatherSide>(r).contribution, recv.at(r)));
    }
    if (send.address != nullptr) rc = first_failure(rc, copy_block(send, recv.at(me)));
    const AllgatherSide& at_head = group.of<AllgatherSide>(head);
    for (int h = 0; h < group.count(); ++h) {
      if (h == group.group()) continue;
      const std::vector<int>& ranks = group.ranks_of(h);
      Bundle bundle(at_head.incoming[h].data(), at_head.received[h], ranks.size());
      rc = first_failure(rc, bundle.check());
      for (int r : ranks) rc = first_failure(rc, bundle.unpack_next(recv.at(r)));
    }
  }
  // Nobody reads another member's contribution or the head's bundles past this phase.
  group.phase();
  return rc;
}

int alltoall(const Blocks& send, const Blocks& recv, bool in_place, MPI_Comm comm, int tag) {
  GroupMeeting group(comm, tag);
  const int me = group.me();
  const int size = comm->size();
  AlltoallSide side{send, &recv, {}};
  // In place, what goes out is packed first: the receives overwrite the same blocks.
  std::vector<char> packed;
  std::vector<std::size_t> offsets;
  if (in_place) {
    offsets.assign(static_cast<std::size_t>(size) + 1, 0);
    for (int r = 0; r < size; ++r) offsets[r + 1] = offsets[r] + recv.at(r).bytes();
    packed.resize(offsets.back());
    for (int r = 0; r < size; ++r) {
      const Block block = recv.at(r);
      if (block.count > 0)
        pack(block.address, block.count, *block.type, packed.data() + offsets[r]);
    }
    side.send = Blocks::packed(packed.data(), offsets.data());
  }
  group.publish(&side);
  group.phase();
  int rc = MPI_SUCCESS;
  for (int r : group.ranks()) {
    rc = first_failure(rc, copy_block(group.of<AlltoallSide>(r).send.at(me), recv.at(r)));
  }
  if (me == group.head(group.group())) group.tell(exchange_blocks(comm, tag, group));
  // Nobody reads another member's blocks or writes the caller's past this phase.
  group.phase();
  return first_failure(first_failure(rc, group.told()), side.failure.get());
}

}  // namespace weft::mpi::spanning
