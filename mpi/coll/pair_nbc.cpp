#include "coll/pair_nbc.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "coll/meeting.h"
#include "coll/nbc.h"
#include "coll/pair_ring.h"
#include "coll/ring_call.h"
#include "comm/communicator.h"
#include "init/world.h"
#include "op/op.h"
#include "pt2pt/p2p.h"

namespace weft::mpi::collective {

namespace {

// Whether the member calling with `arguments` only sends: it may complete at its call.
bool only_sends(const PairArguments& arguments, int me) {
  switch (arguments.kind) {
    case SlotKind::bcast:
    case SlotKind::scatter:
      return me == arguments.root;
    case SlotKind::gather:
    case SlotKind::reduce:
      return me != arguments.root;
    default:
      return false;
  }
}

// Copies `from` into `to`, as much as fits, as collective::transfer does: one memcpy when both
// are contiguous (nearly every small call), where transfer asks the datatype engine for both
// layouts again.
void copy_block(const PairBlock& from, const PairBlock& to) {
  const std::size_t bytes = std::min(from.bytes, to.bytes);
  if (bytes == 0) return;
  if (from.data != nullptr && to.data != nullptr) {
    std::memcpy(to.data, from.data, bytes);
    return;
  }
  transfer(from.block, to.block);
}

// Packs `from` (at most kPairBytes) into `into`: a copy the member keeps or sets aside.
PairBlock pack(const PairBlock& from, std::byte* into) {
  if (from.data != nullptr) {
    if (from.bytes > 0) std::memcpy(into, from.data, from.bytes);
  } else {
    transfer(from.block, Block{into, from.bytes, MPI_BYTE});
  }
  return PairBlock::packed(into, from.bytes);
}

// out = in0 op in1 for `count` contiguous elements, in rank order with one call of the operation
// (apply(op, a, b) makes b = a op b). `out` may be either input (MPI_IN_PLACE): in0 is then set
// aside in `aside` (kPairBytes).
void reduce_two(const void* in0, const void* in1, void* out, std::size_t count, MPI_Datatype type,
                MPI_Op op, std::byte* aside) {
  const std::size_t bytes = count * type->size();
  if (bytes == 0) return;
  if (in0 == out) {
    std::memcpy(aside, in0, bytes);
    in0 = aside;
  }
  if (in1 != out) std::memcpy(out, in1, bytes);
  apply(op, in0, out, count, type);
}

// Holds a failed member's reason for its wait's message (mpi/request/wait.cpp reads a collective
// request's reason from its instance): made only on a failure.
class Failure : public nbc::Instance {
 public:
  Failure(std::string_view function, int rank, std::string reason) : Instance(2, function) {
    set_failure(rank, std::move(reason));
  }

 private:
  Work plan() override { return {}; }
  int home(int) const override { return 0; }
  void run(int) override {}
};

}  // namespace

PairBlock::PairBlock(const Block& block)
    : block(block), data(block.count > 0 ? flat_data(block) : nullptr), bytes(block.bytes()) {}

PairBlock PairBlock::packed(std::byte* data, std::size_t bytes) {
  PairBlock packed;
  packed.block = Block{data, bytes, MPI_BYTE};
  packed.data = data;
  packed.bytes = bytes;
  return packed;
}

PairArguments pair_bcast(int me, int root, const Block& data) {
  PairArguments arguments;
  arguments.kind = SlotKind::bcast;
  arguments.root = root;
  if (me == root) {
    arguments.to[1 - me] = PairBlock(data);
    arguments.sends[1 - me] = true;
  } else {
    arguments.from[root] = PairBlock(data);
  }
  return arguments;
}

PairArguments pair_gather(int me, int root, const Block& send, const Blocks& receive,
                          bool in_place) {
  PairArguments arguments;
  arguments.kind = SlotKind::gather;
  arguments.root = root;
  if (!in_place) {
    arguments.to[root] = PairBlock(send);
    arguments.sends[root] = true;
  }
  if (me == root) {
    arguments.from[0] = PairBlock(receive.at(0));
    arguments.from[1] = PairBlock(receive.at(1));
  }
  return arguments;
}

PairArguments pair_scatter(int me, int root, const Blocks& send, const Block& data, bool in_place) {
  PairArguments arguments;
  arguments.kind = SlotKind::scatter;
  arguments.root = root;
  if (me == root) {
    arguments.to[0] = PairBlock(send.at(0));
    arguments.to[1] = PairBlock(send.at(1));
    arguments.sends[1 - me] = true;
    arguments.sends[me] = !in_place;
  }
  if (!in_place) arguments.from[root] = PairBlock(data);
  return arguments;
}

PairArguments pair_allgather(int me, const Block& data, const Blocks& receive, bool in_place) {
  PairArguments arguments;
  arguments.kind = SlotKind::allgather;
  arguments.from[0] = PairBlock(receive.at(0));
  arguments.from[1] = PairBlock(receive.at(1));
  arguments.to[0] = in_place ? arguments.from[me] : PairBlock(data);
  arguments.to[1] = arguments.to[0];
  arguments.sends[1 - me] = true;
  arguments.sends[me] = !in_place;
  return arguments;
}

PairArguments pair_alltoall(int me, const Blocks& send, const Blocks& receive, bool in_place) {
  PairArguments arguments;
  arguments.kind = SlotKind::alltoall;
  for (int r = 0; r < 2; ++r) {
    arguments.from[r] = PairBlock(receive.at(r));
    arguments.to[r] = in_place ? arguments.from[r] : PairBlock(send.at(r));
  }
  arguments.sends[1 - me] = true;
  arguments.sends[me] = !in_place;
  arguments.in_place = in_place;
  return arguments;
}

std::size_t pair_bytes(const PairArguments& arguments, int me) {
  const int other = 1 - me;
  const std::size_t sent = arguments.sends[other] ? arguments.to[other].bytes : 0;
  return std::max(sent, arguments.from[other].bytes);
}

bool takes_pair_nbc(const Comm& comm, std::size_t bytes) {
  return comm.size() == 2 && bytes <= kPairBytes;
}

int issue_pair(MPI_Comm comm, std::string_view function, const Start& start, int world_rank, int me,
               const PairArguments& arguments) {
  if (int rc = start.check(comm, function); rc != MPI_SUCCESS) return rc;
  // The caller's ranks, looked up once by the caller, and its number serve the note, the request
  // and the call.
  const CallNumber number = comm->locals[static_cast<std::size_t>(me)].next_call(false);
  // A blocking call of the other member with this number (of the pair ring, or meeting in the
  // ring of meetings) learns that it does not match.
  comm->meetings.pair_ring().note_nonblocking(me, number.call);
  comm->meetings.note_nonblocking(number, function);
  Request* request = nbc::new_request(comm, world_rank, me);
  // No instance names the call in a failure's message or the deadlock report: the request does.
  request->spanning_call = function;
  request->keep.hold(start.kept);
  // Before the call: the other member may complete the request as soon as it is queued.
  *start.request = request;
  comm->meetings.pair_nbc().call(me, number.call, function, arguments, request);
  return MPI_SUCCESS;
}

PairNbc::PairNbc() = default;
PairNbc::~PairNbc() = default;

void PairNbc::call(int me, std::uint64_t call, std::string_view function,
                   const PairArguments& arguments, Request* request) {
  Member& mine = members_[me];
  const std::uint64_t index = mine.calls++;
  // A member that knows the other has made this call already comes second: it posts nothing.
  // Read off the caller's side before it arrives: the other member may recycle a spilled side
  // once it has read it.
  bool eager = false;
  bool spilled_mine = false;
  if (mine.other_arrived <= index) {
    const Side& side = post(me, index, call, function, arguments, request);
    eager = side.request == nullptr;
    spilled_mine = &side != &mine.ring[index % kRing];
  }
  // acq_rel: release publishes the caller's side (and its spill) to the other member if it comes
  // second; acquire makes the other's side visible to the caller if it comes second, and orders
  // the other's reads of the caller's older sides before the caller reuses them.
  const std::int64_t before = balance_.fetch_add(me == 0 ? 1 : -1, std::memory_order_acq_rel);
  // The caller's calls ahead of the other member's before this one (negative: behind).
  const std::int64_t lead = me == 0 ? before : -before;
  mine.other_arrived = static_cast<std::uint64_t>(static_cast<std::int64_t>(index) - lead);
  if (lead >= 0) {
    if (eager) {
      Outcome done = keep_own(me, arguments);
      complete(request, me, function, done);
    }
    return;
  }
  // Second. A side spilled in vain (the other member came between the look and the arrival) is
  // the spill list's last of the caller's: nobody reads it.
  if (spilled_mine) {
    const std::lock_guard lock(spill_.lock);
    spill_.spent.push_back(std::move(spill_.sides[me].back()));
    spill_.sides[me].pop_back();
  }
  std::unique_ptr<Side> spilled;
  const Side& first = posted(1 - me, index, &spilled);
  const std::uint64_t first_call = first.call.load(std::memory_order_relaxed);
  if (first_call != call || first.arguments.kind != arguments.kind) {
    mismatch(call, function, first_call, first.function);
  }
  Outcome outcomes[2];
  meet(first, 1 - me, arguments, me, outcomes, mine.scratch);
  Request* waiting = first.request;
  // Read only when it names a failure: it lies on the side's last line, which an eager side's
  // reader touches for nothing else.
  const std::string_view first_function = waiting != nullptr && outcomes[1 - me].rc != MPI_SUCCESS
                                              ? first.function
                                              : std::string_view();
  if (spilled) {
    const std::lock_guard lock(spill_.lock);
    spill_.spent.push_back(std::move(spilled));
  }
  if (waiting != nullptr) complete(waiting, 1 - me, first_function, outcomes[1 - me]);
  complete(request, me, function, outcomes[me]);
}

void PairNbc::look(int me, std::uint64_t index) {
  // acquire: the other member's reads of this member's sides in its calls before the last it
  // arrived at come before this member's reuse of them.
  const std::int64_t balance = balance_.load(std::memory_order_acquire);
  const std::int64_t lead = me == 0 ? balance : -balance;
  members_[me].other_arrived = static_cast<std::uint64_t>(static_cast<std::int64_t>(index) - lead);
}

PairNbc::Side& PairNbc::post(int me, std::uint64_t index, std::uint64_t call,
                             std::string_view function, const PairArguments& arguments,
                             Request* request) {
  Member& mine = members_[me];
  Side* side = &mine.ring[index % kRing];
  // The ring's side held call `held` - 1, which the other member no longer reads once it has
  // arrived past that call; a sender copies eagerly while fewer than kMaxEager of its sides may
  // be unread, from the other member's last call it knows of on.
  const auto reusable = [&] {
    const std::uint64_t held = side->index.load(std::memory_order_relaxed);
    return held == 0 || held < mine.other_arrived;
  };
  const auto unread = [&] {
    const std::uint64_t from = std::max<std::uint64_t>(mine.other_arrived, 1) - 1;
    return index > from ? index - from : 0;
  };
  const bool sends = only_sends(arguments, me);
  if (!reusable() || (sends && unread() >= kMaxEager)) look(me, index);
  if (!reusable()) {
    const std::lock_guard lock(spill_.lock);
    if (spill_.spent.empty()) {
      spill_.sides[me].push_back(std::make_unique<Side>());
    } else {
      spill_.sides[me].push_back(std::move(spill_.spent.back()));
      spill_.spent.pop_back();
    }
    side = spill_.sides[me].back().get();
  }
  side->call.store(call, std::memory_order_relaxed);
  side->function = function;
  side->arguments = arguments;
  side->request = request;
  if (sends && unread() < kMaxEager) {
    side->request = nullptr;
    copy_eagerly(*side, me, arguments);
  }
  // release: for function_of; the other member reads the side after the caller's arrival.
  side->index.store(index + 1, std::memory_order_release);
  return *side;
}

PairNbc::Side& PairNbc::posted(int owner, std::uint64_t index, std::unique_ptr<Side>* spilled) {
  // The owner rewrites this ring side only once the caller has arrived past `index`: it holds
  // this call's side, or an older one still unread when the owner spilled this call's.
  Side& side = members_[owner].ring[index % kRing];
  if (side.index.load(std::memory_order_relaxed) == index + 1) return side;
  // The owner's spilled sides before this one were read in their calls, or spilled in vain and
  // dropped: this call's is the first.
  const std::lock_guard lock(spill_.lock);
  std::deque<std::unique_ptr<Side>>& sides = spill_.sides[owner];
  *spilled = std::move(sides.front());
  sides.pop_front();
  return **spilled;
}

void PairNbc::copy_eagerly(Side& side, int me, const PairArguments& arguments) {
  if (!side.payload) side.payload.reset(new std::byte[kPairBytes]);
  if (arguments.kind == SlotKind::reduce) {
    side.bytes = arguments.send.bytes();
    // Contiguous from its address (pair_nbc.h): a memcpy is the datatype's copy.
    if (side.bytes > 0) std::memcpy(side.payload.get(), arguments.send.address, side.bytes);
    return;
  }
  side.bytes = pack(arguments.to[1 - me], side.payload.get()).bytes;
}

PairNbc::Outcome PairNbc::keep_own(int me, const PairArguments& arguments) {
  Outcome outcome;
  if (!arguments.sends[me]) return outcome;
  Truncation truncation;
  truncation.check(me, arguments.to[me].bytes, arguments.from[me].bytes);
  copy_block(arguments.to[me], arguments.from[me]);
  outcome.rc = truncation.outcome(&outcome.reason);
  return outcome;
}

void PairNbc::complete(Request* request, int rank, std::string_view function, Outcome& outcome) {
  set_empty_status(&request->status);
  request->status.MPI_ERROR = outcome.rc;
  if (outcome.rc != MPI_SUCCESS) {
    request->collective = std::make_shared<Failure>(function, rank, std::move(outcome.reason));
  }
  // Its owner may reuse or free the request from here on.
  finish(*request);
}

std::string_view PairNbc::function_of(std::uint64_t call) {
  // The job is ending: a side found here is of a call the other member made no side of (it made
  // a call of another kind at that number), so nobody reads it or is done with it.
  const auto holds = [call](const Side& side) {
    return side.index.load(std::memory_order_acquire) != 0 &&
           side.call.load(std::memory_order_relaxed) == call;
  };
  for (const Member& member : members_) {
    for (const Side& side : member.ring) {
      if (holds(side)) return side.function;
    }
  }
  const std::lock_guard lock(spill_.lock);
  for (const auto& sides : spill_.sides) {
    for (const auto& side : sides) {
      if (holds(*side)) return side->function;
    }
  }
  return {};
}

void PairNbc::meet(const Side& first, int first_rank, const PairArguments& second, int second_rank,
                   Outcome* outcomes, std::byte* scratch) {
  switch (second.kind) {
    case SlotKind::barrier:
      return;
    case SlotKind::reduce:
    case SlotKind::allreduce:
      return reduce(first, first_rank, second, second_rank, outcomes, scratch);
    default:
      return move(first, first_rank, second, second_rank, outcomes, scratch);
  }
}

void PairNbc::move(const Side& first, int first_rank, const PairArguments& second, int second_rank,
                   Outcome* outcomes, std::byte* scratch) {
  const PairArguments* of[2];
  of[first_rank] = &first.arguments;
  of[second_rank] = &second;
  const bool copied = first.request == nullptr;
  // Each receiver checks its own block first, then the other member's, as the instances' pieces
  // and the blocking Igather root do.
  Truncation truncations[2];
  // Each member's own block, unless in place (an eager first member moved its own at its call).
  for (int m = 0; m < 2; ++m) {
    const PairArguments& member = *of[m];
    if (!member.sends[m] || (copied && m == first_rank)) continue;
    truncations[m].check(m, member.to[m].bytes, member.from[m].bytes);
    copy_block(member.to[m], member.from[m]);
  }
  // The blocks between the members: the first member's from its eager copy if it made one. With
  // MPI_IN_PLACE (an Ialltoall's) a member's block for the other is where the other's block for
  // it goes: it moves first, and member 0's is set aside first when both members are in place.
  const PairBlock* between[2] = {&of[0]->to[1], &of[1]->to[0]};
  PairBlock aside;
  if (copied) {
    aside = PairBlock::packed(first.payload.get(), first.bytes);
    between[first_rank] = &aside;
  } else if (of[0]->in_place && of[1]->in_place) {
    aside = pack(*between[0], scratch);
    between[0] = &aside;
  }
  const int leader = of[1]->in_place ? 1 : 0;
  for (int k = 0; k < 2; ++k) {
    const int from = (leader + k) % 2;
    const int to = 1 - from;
    if (!of[from]->sends[to]) continue;
    truncations[to].check(from, between[from]->bytes, of[to]->from[from].bytes);
    copy_block(*between[from], of[to]->from[from]);
  }
  for (int r = 0; r < 2; ++r) outcomes[r].rc = truncations[r].outcome(&outcomes[r].reason);
}

void PairNbc::reduce(const Side& first, int first_rank, const PairArguments& second,
                     int second_rank, Outcome* outcomes, std::byte* scratch) {
  const PairArguments& one = first.arguments;
  // The first member's data: its eager copy, or its buffer while its request waits.
  const bool copied = first.request == nullptr;
  const std::size_t first_bytes = copied ? first.bytes : one.send.bytes();
  if (one.send.count != second.send.count || first_bytes != second.send.bytes()) {
    // Member 1 against member 0, as agree() reports it. The members that read the result fail, as
    // the pair ring's blocking Reduce reports it: the root of a Reduce, both of an Allreduce.
    const std::size_t counts[2] = {first_rank == 0 ? one.send.count : second.send.count,
                                   first_rank == 1 ? one.send.count : second.send.count};
    const std::size_t bytes[2] = {first_rank == 0 ? first_bytes : second.send.bytes(),
                                  first_rank == 1 ? first_bytes : second.send.bytes()};
    const std::string reason =
        mismatch_reason(Mismatch{1, counts[1], bytes[1], 0, counts[0], bytes[0]});
    for (int r = 0; r < 2; ++r) {
      if (second.kind == SlotKind::allreduce || r == one.root)
        outcomes[r] = {MPI_ERR_TRUNCATE, reason};
    }
    return;
  }
  const void* first_input = copied ? first.payload.get() : one.send.address;
  const void* in0 = first_rank == 0 ? first_input : second.send.address;
  const void* in1 = first_rank == 1 ? first_input : second.send.address;
  const std::size_t count = second.send.count;
  // The reduction's datatype and operation are alike at both members (MPI-3.1 5.9.1); the
  // operation only reads the datatype, which the handle type does not say.
  const MPI_Datatype type = const_cast<MPI_Datatype>(second.send.type);
  if (second.kind == SlotKind::reduce) {
    void* out = second_rank == one.root ? second.receive.address : one.receive.address;
    reduce_two(in0, in1, out, count, type, second.op, scratch);
    return;
  }
  // Into the second member's result, then a copy into the first's: the first's input may be
  // its result buffer (MPI_IN_PLACE), read by the reduction before the copy overwrites it.
  reduce_two(in0, in1, second.receive.address, count, type, second.op, scratch);
  if (second.send.bytes() > 0) {
    std::memcpy(one.receive.address, second.receive.address, second.send.bytes());
  }
}

void PairNbc::mismatch(std::uint64_t call, std::string_view function, std::uint64_t other,
                       std::string_view other_function) {
  // Different numbers: the lower is a call of this kind at one member and of another kind (a
  // blocking one, or an instance's) at the other.
  if (call < other) MeetingTable::out_of_order(call, function, "another collective");
  if (other < call) MeetingTable::out_of_order(other, other_function, "another collective");
  MeetingTable::out_of_order(call, function, other_function);
}

}  // namespace weft::mpi::collective
