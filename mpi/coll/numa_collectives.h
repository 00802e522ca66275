// The staged algorithms of Bcast, Reduce, Allreduce and Allgather for the members of one process
// on several NUMA nodes (docs/mpi-collectives.md, "Across NUMA nodes"): data crosses between
// nodes once per node, into memory of the node, and the node's members copy from there. Each
// runs inside the call's Meeting, the caller then ending with the call's final phase, as the
// flat algorithms do.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "coll/collective.h"
#include "coll/numa_staging.h"
#include "op/op.h"

namespace weft::mpi::collective::numa {

// A node's ring of `slots` fragments, in the node's memory, and the counters of its readers
// (position 0 is the leader, readers 1..readers): fragments each may copy, fragments each has.
class Ring {
 public:
  Ring(int node, const Plan& plan, int readers)
      : fragment_(plan.fragment),
        slots_(static_cast<std::size_t>(plan.slots)),
        memory_(node, plan.fragment * static_cast<std::size_t>(plan.slots)),
        ready_(new Counter[static_cast<std::size_t>(readers) + 1]),
        done_(new Counter[static_cast<std::size_t>(readers) + 1]) {}
  std::byte* slot(std::uint64_t fragment) const {
    return memory_.data() + (fragment % slots_) * fragment_;
  }
  Counter& ready(int position) const { return ready_[static_cast<std::size_t>(position)]; }
  Counter& done(int position) const { return done_[static_cast<std::size_t>(position)]; }

 private:
  std::size_t fragment_;
  std::size_t slots_;
  NodeBuffer memory_;
  std::unique_ptr<Counter[]> ready_;
  std::unique_ptr<Counter[]> done_;
};

// What a Bcast member adds to its side: the leader of a node other than the root's owns its
// node's ring.
struct BcastStage {
  std::unique_ptr<Ring> ring;
};

// The staged Bcast (seed 001's pipeline, one leader per node other than the root's): the leader
// packs fragment i of the root's buffer into slot i mod s of its node's ring once the node's
// readers are done with fragment i - s, announces it to its children in the node's k-ary tree
// and copies it out for itself; each reader forwards what it sees to its children before
// copying it out. Members of the root's node copy straight from the root's buffer. Publishes the
// caller's side; every member copies its own data (side.copied).
template <class Side>
void staged_bcast(Call& call, const Nodes& nodes, const Plan& plan, int root, Side& mine) {
  const int me = call.rank();
  if (me == root) {
    call.publish(&mine);
    return;
  }
  mine.copied = true;
  const Block& from = call.template of<Side>(root).data;
  mine.truncation.check(root, from, mine.data);
  const int node = nodes.node_of[static_cast<std::size_t>(me)];
  const std::vector<int>& group = nodes.members[static_cast<std::size_t>(node)];
  if (node == nodes.node_of[static_cast<std::size_t>(root)]) {
    call.publish(&mine);
    transfer(from, mine.data);
    return;
  }
  const std::size_t total = from.bytes();
  const std::size_t f = plan.fragment;
  const std::uint64_t fragments = (total + f - 1) / f;
  const auto slots = static_cast<std::uint64_t>(plan.slots);
  const int readers = static_cast<int>(group.size()) - 1;
  const int k = std::max(1, plan.arity);
  const auto position = static_cast<int>(std::find(group.begin(), group.end(), me) - group.begin());
  auto announce = [&](const Ring& ring, int parent, std::uint64_t count) {
    for (int c = parent * k + 1; c <= std::min(readers, parent * k + k); ++c) {
      // release: the fragments announced were written before.
      ring.ready(c).value.store(count, std::memory_order_release);
    }
  };
  auto length = [&](std::uint64_t i) { return std::min<std::size_t>(f, total - i * f); };
  if (position == 0) {
    mine.stage.ring =
        std::make_unique<Ring>(nodes.id[static_cast<std::size_t>(node)], plan, readers);
    call.publish(&mine);
    const Ring& ring = *mine.stage.ring;
    for (std::uint64_t i = 0; i < fragments; ++i) {
      if (i >= slots) {
        for (int q = 1; q <= readers; ++q) wait_at_least(ring.done(q), i - slots + 1);
      }
      pack_range(from, i * f, length(i), ring.slot(i));
      announce(ring, 0, i + 1);
      unpack_range(ring.slot(i), i * f, length(i), mine.data);
    }
    return;
  }
  call.publish(&mine);
  const Ring* ring = call.template of<Side>(group.front()).stage.ring.get();
  if (ring == nullptr) {  // the leader took the flat path: only a program whose sizes differ
    transfer(from, mine.data);
    return;
  }
  for (std::uint64_t have = 0; have < fragments;) {
    const std::uint64_t seen = wait_at_least(ring->ready(position), have + 1);
    announce(*ring, position, seen);
    for (std::uint64_t i = have; i < seen; ++i) {
      unpack_range(ring->slot(i), i * f, length(i), mine.data);
    }
    // release: the slots read are free for the leader to write again.
    ring->done(position).value.store(seen, std::memory_order_release);
    have = seen;
  }
}

// A reduction member's side in the staged path: its contribution, first (the flat path reads
// it as a Contribution), and, for a node's leader, the node's partial result.
struct ReductionSide {
  Contribution contribution;
  void* partial = nullptr;
};

// Memory laid out like `count` elements of `type` on NUMA node `node`.
class NodeScratch {
 public:
  NodeScratch(int node, std::size_t count, const Datatype& type)
      : memory_(node, count == 0 ? 1
                                 : static_cast<std::size_t>(type.true_extent() +
                                                            static_cast<MPI_Aint>(count - 1) *
                                                                type.extent())),
        base_(memory_.data() - type.true_lb()) {}
  void* data() const { return base_; }

 private:
  NodeBuffer memory_;
  void* base_;
};

// The staged Reduce (root >= 0) or Allreduce (root < 0): the members of each node reduce their
// node's inputs, in rank order and chunk by chunk, into the node's partial (in the node's
// memory; only local reads); after a phase, the members of the root's node (Reduce) or of every
// node (Allreduce) fold the nodes' partials, in node order, chunk by chunk into the result, which
// Allreduce copies on into the other members of the node. Nodes hold consecutive ranks when the
// operation does not commute (numa_copy::choose), so node order is rank order. False, having
// done nothing, when the members' contributions disagree (the flat path then reports it). The
// caller ends with the final phase.
template <class Members>
bool staged_reduction(Members& call, const Nodes& nodes, int root, MPI_Datatype type, MPI_Op op) {
  if (!agree(call, root < 0 ? 0 : root, false)) return false;
  const int me = call.rank();
  const int node = nodes.node_of[static_cast<std::size_t>(me)];
  const std::vector<int>& group = nodes.members[static_cast<std::size_t>(node)];
  const auto index = static_cast<int>(std::find(group.begin(), group.end(), me) - group.begin());
  const std::size_t count = call.template of<Contribution>(me).count;
  auto side = [&](int r) -> const ReductionSide& { return call.template of<ReductionSide>(r); };
  void* const partial = side(group.front()).partial;
  {
    const Chunks chunks(count, *type, static_cast<int>(group.size()));
    if (index < chunks.parts()) {
      const std::size_t first = chunks.begin(index);
      fold(
          static_cast<int>(group.size()),
          [&](int j) {
            return element(side(group[static_cast<std::size_t>(j)]).contribution.input, first,
                           *type);
          },
          chunks.size(index), type, op, element(partial, first, *type));
    }
  }
  call.phase();
  if (root >= 0 && node != nodes.node_of[static_cast<std::size_t>(root)]) return true;
  const Chunks chunks(count, *type, static_cast<int>(group.size()));
  if (index >= chunks.parts()) return true;
  const std::size_t first = chunks.begin(index);
  const std::size_t length = chunks.size(index);
  const int owner = root >= 0 ? root : me;
  void* result = element(side(owner).contribution.output, first, *type);
  fold(
      static_cast<int>(nodes.members.size()),
      [&](int n) {
        return element(side(nodes.members[static_cast<std::size_t>(n)].front()).partial, first,
                       *type);
      },
      length, type, op, result);
  if (root < 0) {
    for (int r : group) {
      if (r == me) continue;
      copy(result, length, *type, element(side(r).contribution.output, first, *type), length,
           *type);
    }
  }
  return true;
}

// An Allgather member's side in the staged path: its send block, first (the flat path reads it
// as a Block), and, for a node's leader, the node's copy of the other nodes' blocks.
struct GatherSide {
  Block send;
  std::byte* staging = nullptr;
};

// Where member r's block lies in its node's staging (members of other nodes, by receive size).
inline std::vector<std::size_t> staging_offsets(const Nodes& nodes, int node, const Blocks& recv,
                                                std::size_t* total) {
  std::vector<std::size_t> offsets(nodes.node_of.size(), 0);
  std::size_t at = 0;
  for (std::size_t r = 0; r < nodes.node_of.size(); ++r) {
    if (nodes.node_of[r] == node) continue;
    offsets[r] = at;
    at += recv.at(static_cast<int>(r)).bytes();
  }
  *total = at;
  return offsets;
}

// The staged Allgather: the members of each node copy the other nodes' blocks into the node's
// staging, sharing them out; after a phase each member copies every block into its receive
// buffer, from its own node's members' send buffers or from the staging. Publishes the caller's
// side (the leader allocates the staging first); the caller ends with the final phase.
template <class Members>
void staged_allgather(Members& call, const Nodes& nodes, const Blocks& recv, GatherSide& mine,
                      std::optional<NodeBuffer>& staging, Truncation& truncation) {
  const int me = call.rank();
  const int size = call.size();
  const int node = nodes.node_of[static_cast<std::size_t>(me)];
  const std::vector<int>& group = nodes.members[static_cast<std::size_t>(node)];
  const auto index = static_cast<int>(std::find(group.begin(), group.end(), me) - group.begin());
  std::size_t total = 0;
  const std::vector<std::size_t> offsets = staging_offsets(nodes, node, recv, &total);
  if (index == 0) {
    staging.emplace(nodes.id[static_cast<std::size_t>(node)], total);
    mine.staging = staging->data();
  }
  call.publish(&mine);
  auto side = [&](int r) -> const GatherSide& {
    return r == me ? mine : call.template of<GatherSide>(r);
  };
  std::byte* const copy_of = side(group.front()).staging;
  auto staged = [&](int r) {
    return Block{copy_of + offsets[static_cast<std::size_t>(r)],
                 std::min(side(r).send.bytes(), recv.at(r).bytes()), MPI_BYTE};
  };
  if (copy_of != nullptr) {
    int turn = 0;
    for (int r = 0; r < size; ++r) {
      if (nodes.node_of[static_cast<std::size_t>(r)] == node) continue;
      if (turn++ % static_cast<int>(group.size()) == index) transfer(side(r).send, staged(r));
    }
  }
  call.phase();
  for (int k = 0; k < size; ++k) {
    const int r = (me + k) % size;
    const Block into = recv.at(r);
    const Block& from = side(r).send;
    if (from.address == into.address) continue;  // the caller's own block, in place
    truncation.check(r, from, into);
    const bool local = nodes.node_of[static_cast<std::size_t>(r)] == node;
    transfer(local || copy_of == nullptr ? from : staged(r), into);
  }
}

}  // namespace weft::mpi::collective::numa
