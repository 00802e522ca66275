// What the blocking collectives share. Ranks of one process meet in the communicator's Meeting
// for their n-th collective call; each member publishes a description of its side (a struct on
// its own stack) and the members copy and reduce straight between one another's buffers. A
// member's published side stays valid until the call's last phase, so every algorithm ends with
// a phase once the last access to another member's buffers is done.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "coll/meeting.h"
#include "comm/communicator.h"
#include "datatype/datatype.h"
#include "datatype/keep_alive.h"
#include "diagnostics/blocked_call.h"
#include "init/world.h"
#include "mpi.h"
#include "op/op.h"

namespace weft::mpi::collective {

// How an entry point runs a collective once its arguments are checked: now (blocking), as a
// nonblocking collective, or as the persistent request of one (mpi/coll/nbc.h). The three share the
// argument checks and the matching order.
struct Start {
  enum class Mode { blocking, nonblocking, persistent };
  Mode mode = Mode::blocking;
  MPI_Request* request = nullptr;  // where a nonblocking or persistent call returns its request
  // The datatypes and operation its request keeps alive (the program may free them at once).
  Kept kept;

  static Start nonblocking(MPI_Request* request, Kept kept = {}) {
    return {Mode::nonblocking, request, kept};
  }
  static Start persistent(MPI_Request* request, Kept kept = {}) {
    return {Mode::persistent, request, kept};
  }
  bool blocking() const { return mode == Mode::blocking; }
  bool is_persistent() const { return mode == Mode::persistent; }
  // MPI_SUCCESS, or raises MPI_ERR_ARG when a nonblocking call has no request handle to write.
  int check(MPI_Comm comm, std::string_view function) const;
};

// What differs between the members' signatures of a reduction: member `rank`'s count or size
// against member `reference`'s.
struct Mismatch {
  int rank;
  std::size_t count;
  std::size_t bytes;
  int reference;
  std::size_t expected_count;
  std::size_t expected_bytes;
};
// Why a mismatch is an error, for its message.
std::string mismatch_reason(const Mismatch& mismatch);

// The caller's part in one collective call: its comm rank and the meeting of its call number.
class Call {
 public:
  // `function`, a string literal, names the call in stack dumps and the deadlock report.
  Call(Comm* comm, std::string_view function)
      : Call(comm, function, weft::mpi::caller_world_rank()) {}

  int rank() const { return rank_; }
  int size() const { return size_; }

  void publish(const void* side) { meeting_.publish(rank_, side); }
  // Member r's published side, parking until r has published it.
  template <class Side>
  const Side& of(int r) {
    return meeting_->arguments_of<Side>(r);
  }
  // Returns when every member has called it; true in exactly one of them.
  bool phase() { return meeting_->phase_as(rank_, spin_); }
  // The same, one member running `work` for all before anyone returns (the last to arrive; of
  // two members, rank 1: Meeting::phase_as); every member has published by then (each
  // publishes before its phase).
  template <class Work>
  bool phase(Work&& work) {
    return meeting_->phase_as(rank_, spin_, std::forward<Work>(work));
  }

  // What one member found wrong with the members' signatures (it reads them all) and tells every
  // member: set before a phase, read after it.
  void set_mismatch(const Mismatch& mismatch) {
    meeting_->shared = std::make_shared<Mismatch>(mismatch);
  }
  const Mismatch* mismatch() const { return static_cast<const Mismatch*>(meeting_->shared.get()); }
  // Meeting::trace_stamp of this call's meeting: set in a phase's work, read after the phase.
  std::uint64_t& trace_stamp() { return meeting_->trace_stamp; }

 private:
  // The caller's world rank looked up once: each lookup goes through the current thread.
  Call(Comm* comm, std::string_view function, int world_rank)
      : rank_(comm->rank_of(world_rank)),
        size_(comm->size()),
        spin_(world()->rank(world_rank).spin),
        number_(comm->locals[comm->rank_of_world[world_rank]].next_call(true)),
        blocked_(blocked(comm, function, number_.call)),
        scope_(blocked_),
        meeting_(comm->meetings.join(number_, size_, function, comm->self)) {}

  static BlockedCall blocked(Comm* comm, std::string_view function, std::uint64_t number) {
    BlockedCall call = blocked_in(BlockedCall::Kind::collective, function, comm, MPI_PROC_NULL, 0);
    call.collective = number;
    return call;
  }
  const int rank_;
  const int size_;
  SpinBudget& spin_;  // the caller's rank's
  const CallNumber number_;
  const BlockedCall blocked_;
  const BlockedScope scope_;
  MeetingRef meeting_;
};

// The address of element `index` of a buffer of `type`.
inline void* element(const void* base, std::size_t index, const Datatype& type) {
  // Sides are published as const; the buffers they name are written by whichever member the
  // algorithm assigns, while their owner waits in the final phase.
  return const_cast<char*>(static_cast<const char*>(base)) +
         static_cast<std::ptrdiff_t>(index) * type.extent();
}

// `count` elements of `type` at `address`: one member's data for one peer.
struct Block {
  void* address = nullptr;
  std::size_t count = 0;
  const Datatype* type = nullptr;

  std::size_t bytes() const { return count == 0 ? 0 : count * type->size(); }
};

// Where one member's blocks for each peer lie in its buffer: `count` elements per peer back to
// back, or counts and displacements per peer (in extents of `type`, or in bytes with one type per
// peer, as MPI_Alltoallw has them), or a packed copy (byte offsets per peer, n + 1 of them).
struct Blocks {
  const void* base = nullptr;
  const Datatype* type = nullptr;
  int count = 0;
  const int* counts = nullptr;
  const int* displs = nullptr;
  const MPI_Datatype* types = nullptr;
  const std::size_t* offsets = nullptr;

  static Blocks regular(const void* base, int count, MPI_Datatype type) {
    return {base, type, count, nullptr, nullptr, nullptr, nullptr};
  }
  static Blocks varying(const void* base, const int* counts, const int* displs, MPI_Datatype type) {
    return {base, type, 0, counts, displs, nullptr, nullptr};
  }
  static Blocks typed(const void* base, const int* counts, const int* byte_displs,
                      const MPI_Datatype* types) {
    return {base, nullptr, 0, counts, byte_displs, types, nullptr};
  }
  static Blocks packed(const void* base, const std::size_t* offsets) {
    return {base, MPI_BYTE, 0, nullptr, nullptr, nullptr, offsets};
  }

  Block at(int peer) const;
};

// Copies `from` into `to`, as much as fits (more would land in other peers' blocks).
void transfer(const Block& from, const Block& to);

// The first block a member received that did not fit where it was received (MPI_ERR_TRUNCATE, as
// a point-to-point receive reports it).
class Truncation {
 public:
  void check(int from_rank, const Block& from, const Block& to) {
    check(from_rank, from.bytes(), to.bytes());
  }
  // The same with the blocks' sizes.
  void check(int from_rank, std::size_t bytes, std::size_t capacity) {
    if (from_rank_ < 0 && bytes > capacity) {
      from_rank_ = from_rank;
      bytes_ = bytes;
      capacity_ = capacity;
    }
  }
  bool failed() const { return from_rank_ >= 0; }
  // MPI_ERR_TRUNCATE with its reason in *reason when failed, else MPI_SUCCESS: a nonblocking
  // collective's outcome for the member it belongs to.
  int outcome(std::string* reason) const {
    if (!failed()) return MPI_SUCCESS;
    *reason = this->reason();
    return MPI_ERR_TRUNCATE;
  }
  // Why the block did not fit, for the error's message; empty when it did.
  std::string reason() const;
  // MPI_SUCCESS, or raises MPI_ERR_TRUNCATE on `comm` and returns it.
  int raise(MPI_Comm comm, std::string_view function) const;

 private:
  int from_rank_ = -1;
  std::size_t bytes_ = 0;
  std::size_t capacity_ = 0;
};

// Raises MPI_ERR_TRUNCATE for a signature mismatch a member reported to all; MPI_SUCCESS if none.
int raise_mismatch(MPI_Comm comm, std::string_view function, const Mismatch* mismatch);

// How the elements of a reduction are shared among the members that reduce them: `parts` ranges
// as equal as possible, their boundaries on multiples of `grain` elements (about a cache line)
// so that neighbouring writers do not share lines. Small reductions are one part, done by one
// member: waking the others to reduce a few bytes costs more than the work.
class Chunks {
 public:
  Chunks(std::size_t count, const Datatype& type, int members);
  int parts() const { return parts_; }
  std::size_t begin(int part) const;
  std::size_t size(int part) const { return begin(part + 1) - begin(part); }

 private:
  std::size_t count_;
  std::size_t grain_;
  int parts_;
};

// Below this many bytes moved in all, one member (the last to arrive) copies for everyone inside
// the final phase: members then wait for nobody's publication, only for that phase.
constexpr std::size_t kSerialCopyBytes = 16 * 1024;

// Memory laid out like a user buffer of `count` elements of `type` (a reduction's accumulator);
// small ones need no allocation.
class Scratch {
 public:
  Scratch(std::size_t count, const Datatype& type);
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* data() const { return base_; }

 private:
  alignas(std::max_align_t) std::byte inline_[256];
  std::unique_ptr<std::byte[]> heap_;
  void* base_;
};

// dst = in(0) op in(1) op ... op in(members - 1) over `count` elements of `type`, in rank order
// (non-commutative operations need it). apply(op, a, b) computes b = a op b, so the fold starts
// from the highest rank. `dst` must not be one of the inputs.
template <class Input>
void fold(int members, Input&& in, std::size_t count, MPI_Datatype type, MPI_Op op, void* dst) {
  if (count == 0) return;
  copy(in(members - 1), count, *type, dst, count, *type);
  for (int r = members - 2; r >= 0; --r) apply(op, in(r), dst, count, type);
}

// One member's side of a reduction (Reduce, Allreduce, Reduce_scatter, Scan, Exscan).
struct Contribution {
  const void* input;  // sendbuf, or recvbuf with MPI_IN_PLACE
  void* output;       // recvbuf
  std::size_t count;
  const Datatype* type;

  std::size_t bytes() const { return count * type->size(); }
};

// The first member whose contribution differs in count or size from member `reference`'s (a
// reduction would otherwise read or write past a buffer), if any. `members` is a Call or a
// nonblocking collective's instance: anything with size() and of<Contribution>(r).
template <class Members>
std::optional<Mismatch> find_mismatch(Members& members, int reference) {
  const Contribution& expected = members.template of<Contribution>(reference);
  for (int r = 0; r < members.size(); ++r) {
    const Contribution& c = members.template of<Contribution>(r);
    if (c.count != expected.count || c.bytes() != expected.bytes()) {
      return Mismatch{r, c.count, c.bytes(), reference, expected.count, expected.bytes()};
    }
  }
  return std::nullopt;
}

// Whether every member's contribution agrees with member `reference`'s. With `report`, tells
// every member what differs, through the meeting.
bool agree(Call& call, int reference, bool report);

// Runs part(p) for each chunk p of a reduction, then the call's final phase. With several
// chunks, the member whose `own_part` is p does chunk p before the phase; with one, the last
// member to arrive does it inside the phase, so that no member waits for another's publication.
// Nothing is reduced, and every member is told, when the contributions disagree.
template <class Part>
void reduce_parts(Call& call, const Chunks& chunks, int reference, int own_part, Part&& part) {
  if (chunks.parts() > 1 && own_part < chunks.parts() && agree(call, reference, false)) {
    part(own_part);
  }
  call.phase([&] {
    if (agree(call, reference, true) && chunks.parts() == 1) part(0);
  });
}

// Argument checks the collectives add to mpi/errhan/error.h's; each returns MPI_SUCCESS or raises
// on `comm` and returns the class.

// MPI_IN_PLACE where this call does not allow it (MPI_ERR_BUFFER); `where` says where it is
// allowed, e.g. "only as sendbuf at the root".
int check_not_in_place(MPI_Comm comm, std::string_view function, std::string_view argument,
                       const void* buffer, std::string_view where);
// The same buffer passed as sendbuf and recvbuf (MPI_ERR_BUFFER; MPI_IN_PLACE says it instead).
int check_not_aliased(MPI_Comm comm, std::string_view function, const void* sendbuf,
                      const void* recvbuf, bool moves_data);
// An array of `size` counts: not null (MPI_ERR_ARG), each >= 0 (MPI_ERR_COUNT).
int check_counts(MPI_Comm comm, std::string_view function, std::string_view argument,
                 const int* counts, int size);
// An array of displacements, not null (MPI_ERR_ARG).
int check_displs(MPI_Comm comm, std::string_view function, std::string_view argument,
                 const int* displs);
// An array of `size` datatypes: not null, and each valid where its count is not zero.
int check_types(MPI_Comm comm, std::string_view function, std::string_view argument,
                const MPI_Datatype* types, const int* counts, int size);
// The buffer of a counts array: as check_buffer, for the sum of the counts.
int check_buffer_of(MPI_Comm comm, std::string_view function, std::string_view argument,
                    const void* buffer, const int* counts, int size, MPI_Datatype type);
// op not null and defined on type (MPI_ERR_OP).
int check_op_on(MPI_Comm comm, std::string_view function, MPI_Op op, MPI_Datatype type);

}  // namespace weft::mpi::collective
