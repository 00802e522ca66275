// Collectives on communicators that span processes, in two levels (the hierarchical scheme of MPC
// and of the process-based MPIs' shared-memory collectives): the members of each process meet in
// a GroupMeeting and copy between one another's buffers; one member per process, its group's
// head, carries the whole group's data to the other heads, one message per pair of groups; the
// group then spreads what its head received. Between processes a call costs one message per
// pair of heads instead of one per pair of members.
#include "coll/collective_hierarchy.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <vector>

#include "coll/bundle.h"
#include "coll/collective_spanning.h"
#include "coll/group_meeting.h"
#include "coll/spanning_exchange.h"
#include "op/op.h"

namespace weft::mpi::spanning {

namespace {

using collective::Block;
using collective::Blocks;
using collective::Contribution;
using collective::Scratch;

// Group `g`'s place in a binomial tree of `groups` groups rooted at `root_group`.
struct Tree {
  int parent = -1;
  std::vector<int> children;
};

Tree tree_of(int g, int root_group, int groups) {
  const int relative = (g - root_group + groups) % groups;
  Tree tree;
  int mask = 1;
  for (; mask < groups; mask <<= 1) {
    if ((relative & mask) != 0) {
      tree.parent = (relative - mask + root_group) % groups;
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (relative + mask < groups) tree.children.push_back((relative + mask + root_group) % groups);
  }
  return tree;
}

// A dissemination barrier among the heads: log2(groups) rounds of one message each.
int heads_barrier(MPI_Comm comm, const GroupMeeting& group, int tag) {
  const int groups = group.count();
  const int g = group.group();
  Exchange exchange(comm, tag);
  for (int step = 1; step < groups; step <<= 1) {
    exchange.send(group.head((g + step) % groups), nullptr, 0, MPI_BYTE);
    exchange.receive(group.head((g - step + groups) % groups), nullptr, 0, MPI_BYTE);
    if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// MPI_ERR_TRUNCATE unless receive number `receive` of `exchange` got exactly `bytes`: members
// of a reduction must agree on its signature.
int check_received(const Exchange& exchange, std::size_t receive, std::size_t bytes) {
  return exchange.received(receive) == bytes ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
}

// The head's fold of its group's inputs, in rank order, into `partial`; MPI_ERR_TRUNCATE when
// the members disagree on count or size.
int fold_group(GroupMeeting& group, const Contribution& mine, void* partial, MPI_Op op) {
  const std::vector<int>& ranks = group.ranks();
  for (int r : ranks) {
    const Contribution& theirs = group.of<Contribution>(r);
    if (theirs.count != mine.count || theirs.bytes() != mine.bytes()) return MPI_ERR_TRUNCATE;
  }
  collective::fold(
      static_cast<int>(ranks.size()),
      [&](int i) { return group.of<Contribution>(ranks[static_cast<std::size_t>(i)]).input; },
      mine.count, const_cast<MPI_Datatype>(mine.type), op, partial);
  return MPI_SUCCESS;
}

// Up to this many bytes, every head sends its group's partial result to every other head, which
// folds them all: one message time instead of a reduction then a broadcast.
constexpr std::size_t kEveryHeadBytes = 64 * 1024;

// The heads turn their groups' partial results into the whole reduction, in `output` at every
// head. A head whose group failed (`failure`) still sends, an empty message, so that every other
// head learns of it as a mismatch instead of waiting for ever; output is then left alone.
int combine_heads(MPI_Comm comm, const GroupMeeting& group, int tag, int failure,
                  const void* partial, void* output, std::size_t count, MPI_Datatype type,
                  MPI_Op op) {
  const int groups = group.count();
  const int g = group.group();
  const std::size_t bytes = count * type->size();
  Exchange exchange(comm, tag);
  std::deque<Scratch> received;
  std::vector<const void*> inputs(static_cast<std::size_t>(groups), partial);
  std::vector<std::size_t> receipts(static_cast<std::size_t>(groups));
  const bool every_head = groups == 2 || bytes <= kEveryHeadBytes;
  const std::size_t sent = failure == MPI_SUCCESS ? count : 0;
  if (every_head || g == 0) {
    for (int h = 0; h < groups; ++h) {
      if (h == g) continue;
      received.emplace_back(count, *type);
      inputs[h] = received.back().data();
      receipts[h] = exchange.receive(group.head(h), received.back().data(), count, type);
      if (every_head) exchange.send(group.head(h), partial, sent, type);
    }
  } else {
    exchange.send(group.head(0), partial, sent, type);
  }
  int rc = first_failure(failure, exchange.wait());
  if (every_head || g == 0) {
    for (int h = 0; h < groups && rc == MPI_SUCCESS; ++h) {
      if (h != g) rc = check_received(exchange, receipts[h], bytes);
    }
    if (rc == MPI_SUCCESS) {
      collective::fold(
          groups, [&](int h) { return inputs[static_cast<std::size_t>(h)]; }, count, type, op,
          output);
    }
  }
  if (every_head) return rc;
  // The result goes from group 0's head down a binomial tree of the heads; a failure goes down
  // as an empty message.
  const Tree tree = tree_of(g, 0, groups);
  if (tree.parent >= 0) {
    // Received apart from output: a failed head must leave its members' buffers alone.
    Scratch result(count, *type);
    const std::size_t receipt =
        exchange.receive(group.head(tree.parent), result.data(), count, type);
    rc = first_failure(rc, exchange.wait());
    rc = first_failure(rc, check_received(exchange, receipt, bytes));
    if (rc == MPI_SUCCESS) copy(result.data(), count, *type, output, count, *type);
  }
  for (int child : tree.children) {
    exchange.send(group.head(child), output, rc == MPI_SUCCESS ? count : 0, type);
  }
  return first_failure(rc, exchange.wait());
}

// A member's side of a broadcast: its buffer, and at the head how many bytes arrived there.
struct BcastSide {
  Block block;
  std::size_t arrived;
};

// A member's side of a gather.
struct GatherSide {
  Block send;             // none at a root gathering in place
  const Blocks* recv;     // the root's
  SharedFailure failure;  // the root's: a block that did not fit, found by its sender
};

// A member's side of a scatter.
struct ScatterSide {
  Block recv;             // none at a root scattering in place
  const Blocks* send;     // the root's
  SharedFailure failure;  // found by the head that unpacks the member's block
};

}  // namespace

bool reducible_in_groups(MPI_Comm comm, MPI_Op op) {
  return comm->groups.consecutive || commutative(op);
}

int barrier(MPI_Comm comm, int tag) {
  GroupMeeting group(comm, tag);
  group.phase();
  if (group.me() == group.head(group.group())) group.tell(heads_barrier(comm, group, tag));
  group.phase();
  return group.told();
}

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, int tag) {
  GroupMeeting group(comm, tag);
  BcastSide mine{{buffer, static_cast<std::size_t>(count), type}, 0};
  mine.arrived = mine.block.bytes();
  group.publish(&mine);
  const int g = group.group();
  const int head = group.head(g, root);
  std::optional<Exchange> exchange;
  std::vector<char> cut;
  if (group.me() == head) {
    exchange.emplace(comm, tag);
    const Tree tree = tree_of(g, group.groups().group_of[root], group.count());
    int rc = MPI_SUCCESS;
    if (tree.parent >= 0) {
      const std::size_t receipt = exchange->receive(group.head(tree.parent, root), mine.block);
      rc = exchange->wait();
      mine.arrived = exchange->received(receipt);
      // Members must agree on the signature: less data than the buffer is a mismatch too.
      if (rc == MPI_SUCCESS && mine.arrived != mine.block.bytes()) rc = MPI_ERR_TRUNCATE;
    }
    // What arrived goes on down the tree, and after a mismatch one byte more than that: no
    // member's buffer then matches it, so each receiver writes what fits and reports the
    // mismatch instead of waiting for ever or taking the cut data for whole.
    if (rc != MPI_SUCCESS && !tree.children.empty()) {
      cut.resize(mine.block.bytes() + 1);
      pack(mine.block.address, mine.block.count, *mine.block.type, cut.data());
      cut.resize(mine.arrived + 1);
    }
    for (int child : tree.children) {
      if (rc == MPI_SUCCESS) {
        exchange->send(group.head(child, root), mine.block);
      } else {
        exchange->send(group.head(child, root), cut.data(), cut.size(), MPI_BYTE);
      }
    }
    group.tell(rc);
  }
  group.phase();
  int rc = group.told();
  if (group.me() != head) {
    const BcastSide& source = group.of<BcastSide>(head);
    const Block& from = source.block;
    const Block& to = mine.block;
    const std::size_t fits = std::min(source.arrived, to.bytes());
    if (fits > 0)
      copy_range(from.address, from.count, *from.type, to.address, to.count, *to.type, 0, fits);
    if (source.arrived != to.bytes()) rc = MPI_ERR_TRUNCATE;
  }
  // Nobody reads the head's buffer past this phase.
  group.phase();
  if (exchange) rc = first_failure(rc, exchange->wait());
  return rc;
}

int gather(const Block& send, const Blocks& recv, int root, MPI_Comm comm, int tag) {
  GroupMeeting group(comm, tag);
  const int me = group.me();
  const int g = group.group();
  GatherSide side{send, &recv, {}};
  group.publish(&side);
  if (g != group.groups().group_of[root]) {
    group.phase();
    if (me != group.head(g)) {
      group.phase();
      return MPI_SUCCESS;
    }
    std::vector<Block> blocks;
    for (int r : group.ranks()) blocks.push_back(group.of<GatherSide>(r).send);
    const std::vector<char> bundle = Bundle::pack(blocks);
    // The members' blocks are packed: they may go.
    group.phase();
    Exchange exchange(comm, tag);
    exchange.send(root, bundle.data(), bundle.size(), MPI_BYTE);
    return exchange.wait();
  }
  if (me != root) {
    group.phase();
    const GatherSide& at_root = group.of<GatherSide>(root);
    if (int rc = copy_block(send, at_root.recv->at(me)); rc != MPI_SUCCESS) {
      at_root.failure.report(rc);
    }
    group.phase();
    return MPI_SUCCESS;
  }
  const int groups = group.count();
  Exchange exchange(comm, tag);
  std::vector<std::vector<char>> incoming(static_cast<std::size_t>(groups));
  std::vector<std::size_t> receipts(static_cast<std::size_t>(groups));
  for (int h = 0; h < groups; ++h) {
    if (h == g) continue;
    std::vector<Block> blocks;
    for (int r : group.ranks_of(h)) blocks.push_back(recv.at(r));
    incoming[h].resize(Bundle::capacity(blocks));
    receipts[h] = exchange.receive(group.head(h), incoming[h].data(), incoming[h].size(), MPI_BYTE);
  }
  group.phase();
  int rc = send.address != nullptr ? copy_block(send, recv.at(me)) : MPI_SUCCESS;
  rc = first_failure(exchange.wait(), rc);
  // A bundle cut short by a member's oversized block still holds the blocks before it, and what
  // fits of that one: they are written, as a receive writes what fits.
  for (int h = 0; h < groups; ++h) {
    if (h == g) continue;
    const std::vector<int>& ranks = group.ranks_of(h);
    Bundle bundle(incoming[h].data(), exchange.received(receipts[h]), ranks.size());
    rc = first_failure(rc, bundle.check());
    for (int r : ranks) rc = first_failure(rc, bundle.unpack_next(recv.at(r)));
  }
  group.phase();
  return first_failure(rc, side.failure.get());
}

int scatter(const Blocks& send, const Block& recv, int root, MPI_Comm comm, int tag) {
  GroupMeeting group(comm, tag);
  const int me = group.me();
  const int g = group.group();
  ScatterSide side{recv, &send, {}};
  group.publish(&side);
  if (g == group.groups().group_of[root]) {
    std::optional<Exchange> exchange;
    std::deque<std::vector<char>> outgoing;
    if (me == root) {
      exchange.emplace(comm, tag);
      for (int h = 0; h < group.count(); ++h) {
        if (h == g) continue;
        std::vector<Block> blocks;
        for (int r : group.ranks_of(h)) blocks.push_back(send.at(r));
        outgoing.push_back(Bundle::pack(blocks));
        exchange->send(group.head(h), outgoing.back().data(), outgoing.back().size(), MPI_BYTE);
      }
    }
    group.phase();
    int rc = MPI_SUCCESS;
    if (me != root) {
      rc = copy_block(group.of<ScatterSide>(root).send->at(me), recv);
    } else if (recv.address != nullptr) {
      rc = copy_block(send.at(me), recv);
    }
    // Nobody reads the root's blocks past this phase.
    group.phase();
    if (exchange) rc = first_failure(rc, exchange->wait());
    return rc;
  }
  group.phase();
  if (me == group.head(g)) {
    const std::vector<int>& ranks = group.ranks();
    std::vector<Block> blocks;
    for (int r : ranks) blocks.push_back(group.of<ScatterSide>(r).recv);
    std::vector<char> incoming(Bundle::capacity(blocks));
    Exchange exchange(comm, tag);
    const std::size_t receipt = exchange.receive(root, incoming.data(), incoming.size(), MPI_BYTE);
    // A bundle cut short by an oversized block fails only the members whose blocks did not
    // arrive whole or fit; the others get theirs.
    const int rc = exchange.wait();
    Bundle bundle(incoming.data(), exchange.received(receipt), ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (int unpacked = bundle.unpack_next(blocks[i]); unpacked != MPI_SUCCESS) {
        group.of<ScatterSide>(ranks[i]).failure.report(unpacked);
      }
    }
    group.tell(rc == MPI_ERR_TRUNCATE ? MPI_SUCCESS : rc);
  }
  group.phase();
  return first_failure(group.told(), side.failure.get());
}

int reduce_in_groups(const void* input, void* output, std::size_t count, MPI_Datatype type,
                     MPI_Op op, int root, MPI_Comm comm, int tag) {
  GroupMeeting group(comm, tag);
  const int me = group.me();
  const int g = group.group();
  const int groups = group.count();
  const Contribution mine{input, output, count, type};
  group.publish(&mine);
  const std::size_t bytes = mine.bytes();
  Exchange exchange(comm, tag);
  // The root's receives of the other groups' partial results go out before its group meets.
  std::deque<Scratch> received;
  std::vector<const void*> inputs(static_cast<std::size_t>(groups));
  std::vector<std::size_t> receipts(static_cast<std::size_t>(groups));
  if (me == root) {
    for (int h = 0; h < groups; ++h) {
      if (h == g) continue;
      received.emplace_back(count, *type);
      inputs[h] = received.back().data();
      receipts[h] = exchange.receive(group.head(h), received.back().data(), count, type);
    }
  }
  group.phase();
  int rc = MPI_SUCCESS;
  Scratch partial(me == group.head(g, root) ? count : 0, *type);
  if (me == group.head(g, root)) {
    rc = fold_group(group, mine, partial.data(), op);
    // A failed group sends nothing, which the root takes for a mismatch.
    if (me != root) exchange.send(root, partial.data(), rc == MPI_SUCCESS ? count : 0, type);
    group.tell(rc);
  }
  // The members' inputs are folded: they may go.
  group.phase();
  rc = first_failure(group.told(), exchange.wait());
  if (me != root) return rc;
  for (int h = 0; h < groups && rc == MPI_SUCCESS; ++h) {
    if (h != g) rc = check_received(exchange, receipts[h], bytes);
  }
  if (rc != MPI_SUCCESS) return rc;
  inputs[g] = partial.data();
  collective::fold(
      groups, [&](int h) { return inputs[static_cast<std::size_t>(h)]; }, count, type, op, output);
  return MPI_SUCCESS;
}

int allreduce_in_groups(const void* input, void* output, std::size_t count, MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm, int tag) {
  GroupMeeting group(comm, tag);
  const int me = group.me();
  const int head = group.head(group.group());
  const Contribution mine{input, output, count, type};
  group.publish(&mine);
  group.phase();
  // Small results the head writes into every member's buffer itself, saving the group a phase;
  // larger ones each member copies. The head's signature decides, so that all agree.
  const Contribution& at_head = group.of<Contribution>(head);
  const bool serial = at_head.bytes() * group.ranks().size() <= collective::kSerialCopyBytes;
  if (me == head) {
    Scratch partial(count, *type);
    const int folded = fold_group(group, mine, partial.data(), op);
    int rc = combine_heads(comm, group, tag, folded, partial.data(), output, count, type, op);
    if (rc == MPI_SUCCESS && serial) {
      for (int r : group.ranks()) {
        if (r != me) copy(output, count, *type, group.of<Contribution>(r).output, count, *type);
      }
    }
    group.tell(rc);
  }
  group.phase();
  int rc = group.told();
  if (serial) return rc;
  if (me != head && rc == MPI_SUCCESS) copy(at_head.output, count, *type, output, count, *type);
  // Nobody reads the head's result past this phase.
  group.phase();
  return rc;
}

}  // namespace weft::mpi::spanning
