// Nonblocking and persistent collectives inside a process, as event-driven state machines.
//
// The n-th collective call of every member of a communicator joins one shared Instance (through
// the communicator's MeetingTable: its InstanceRing, lock-free, or its map when the ring's slot is
// still held by an older call; as blocking calls join a Meeting). A member writes its side
// of the call (buffers, counts, types) into the instance and arrives; it never waits. The arrival
// that completes the set, the last member's, is the event that starts the work: that thread
// turns it into pieces (copies into one member's buffers, a chunk of a reduction) and runs them
// at once when they are small or the job has no progress threads, or posts each to the progress
// thread of the member whose buffers it writes. Whichever thread finishes the last piece
// completes every member's request. So a rank that computes between its call and its wait finds
// the collective done, driven by the others' calls and the progress threads; a wait parks on its
// request and never competes with the thread driving it.
//
// A persistent collective (MPI_Bcast_init and kin) joins a Series at its init call; the k-th
// MPI_Start of every member joins the k-th instance of that series.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coll/collective.h"
#include "coll/meeting.h"
#include "coll/progress.h"
#include "coll/ring_call.h"
#include "comm/communicator.h"
#include "mpi.h"
#include "request/request.h"

namespace weft::mpi::nbc {

// An entry per member of an instance: inline for up to two members, so that the small common
// case is one allocation (the instance's) whose entries share its lines; else allocated.
template <class T>
class PerMember {
 public:
  explicit PerMember(int size)
      : heap_(size > kInline ? new T[static_cast<std::size_t>(size)]() : nullptr) {}
  T& operator[](std::size_t rank) { return heap_ != nullptr ? heap_[rank] : inline_[rank]; }
  const T& operator[](std::size_t rank) const {
    return heap_ != nullptr ? heap_[rank] : inline_[rank];
  }

 private:
  static constexpr int kInline = 2;
  std::array<T, kInline> inline_{};
  std::unique_ptr<T[]> heap_;
};

class Instance : public std::enable_shared_from_this<Instance> {
 public:
  Instance(int size, std::string_view function);
  virtual ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  int size() const { return size_; }
  std::string_view function() const { return function_; }

  // Member `rank` (comm rank; world rank `world_rank`) has written its side; `request` completes
  // when the whole collective has. The last arrival starts the work.
  void arrive(int rank, int world_rank, Request* request);

  // Why member `rank`'s request failed, for the error its wait raises.
  std::string failure(int rank) const;

 protected:
  struct Work {
    int pieces = 0;
    std::size_t bytes = 0;  // moved or reduced by all pieces together
  };
  // By the last member to arrive, every side written: the work, as pieces.
  virtual Work plan() = 0;
  // The work of a collective with one piece per member, that piece moving bytes_of(r) bytes.
  template <class Bytes>
  Work per_member(Bytes&& bytes_of) const {
    Work work{size_, 0};
    for (int r = 0; r < size_; ++r) work.bytes += bytes_of(r);
    return work;
  }
  // The member whose buffers piece `index` writes: its progress thread runs it.
  virtual int home(int index) const = 0;
  virtual void run(int index) = 0;
  // After the last piece, before any request completes.
  virtual void finish() {}
  // MPI_SUCCESS, or member `rank`'s error class with its reason in *reason.
  virtual int outcome(int rank, std::string* reason) const;
  // Keeps member `rank`'s failure reason for failure().
  void set_failure(int rank, std::string reason);

 private:
  struct Piece : ProgressTask {
    Instance* instance = nullptr;
    int index = 0;
  };
  static void run_posted(ProgressTask* task);
  void start_work();
  void piece_done();
  void complete();

  struct Member {
    Request* request = nullptr;
    int world_rank = -1;
  };

  const int size_;
  const std::string_view function_;
  PerMember<Member> members_;
  // Allocated only when some member's request fails (rare), by comm rank.
  std::unique_ptr<std::string[]> failures_;
  // Allocated only when pieces go to progress threads.
  std::unique_ptr<Piece[]> pieces_;
  // acq_rel on both: each member's side, written before it arrives, is seen by the last arrival;
  // each piece's writes are seen by the thread that finishes the last one.
  std::atomic<int> arrived_{0};
  std::atomic<int> remaining_{0};
};

// An instance whose members' sides are of type Side. of<Side>(r) reads member r's as a blocking
// Call reads a published side, so an algorithm written against that pair serves both.
template <class Side>
class Sided : public Instance {
 public:
  Sided(int size, std::string_view function) : Instance(size, function), sides_(size) {}

  Side& side(int rank) { return sides_[static_cast<std::size_t>(rank)]; }
  template <class T = Side>
  const T& of(int rank) const {
    return sides_[static_cast<std::size_t>(rank)];
  }

 private:
  PerMember<Side> sides_;
};

// Below this many bytes in all, the last member to arrive does the work itself: handing it to
// progress threads costs a wake-up each, more than copying a few kilobytes.
constexpr std::size_t kInlineBytes = 16 * 1024;

// The instances of one persistent collective, by start number.
struct Series {
  MeetingTable starts;
};

// Issues a nonblocking collective (or, with `persistent`, creates the persistent request of
// one) for the calling member of `comm`, its arguments checked: `fill(op, rank)` writes the
// caller's side into an instance of type Op. Returns MPI_SUCCESS with *handle set.
template <class Op, class Fill>
int issue(MPI_Comm comm, std::string_view function, bool persistent, MPI_Request* handle,
          Fill fill);

// The shared object of type T of the caller's call `number` on `comm`, made by make() for the
// first member. MPI_COMM_SELF is one object whose every rank is its only member: the ranks' calls
// share its numbers, so each call meets alone in the map (joined by its one member, it leaves no
// entry) rather than in the instance ring.
template <class T, class Make>
std::shared_ptr<T> join(MPI_Comm comm, const CallNumber& number, std::string_view function,
                        Make&& make) {
  if (comm->self) {
    return comm->meetings.join<T>(number.call, number.call, comm->size(), function, make);
  }
  return comm->meetings.join<T>(number, comm->size(), function, make);
}

// A collective request of the caller on `comm`, from its rank's pool.
Request* new_request(MPI_Comm comm);
// The same for a caller whose world rank and rank in `comm` are known.
Request* new_request(MPI_Comm comm, int world_rank, int comm_rank);

// The same, as `start` says (it is not blocking), its request handle checked.
template <class Op, class Fill>
int issue(MPI_Comm comm, std::string_view function, const collective::Start& start, Fill fill) {
  if (int rc = start.check(comm, function); rc != MPI_SUCCESS) return rc;
  const int rc = issue<Op>(comm, function, start.is_persistent(), start.request, std::move(fill));
  if (rc == MPI_SUCCESS) (*start.request)->keep.hold(start.kept);
  return rc;
}

template <class Op, class Fill>
int issue(MPI_Comm comm, std::string_view function, bool persistent, MPI_Request* handle,
          Fill fill) {
  Request* request = new_request(comm);
  const int size = comm->size();
  auto make = [size, function] { return std::make_shared<Op>(size, function); };
  auto start = [fill](Request& r, std::shared_ptr<Op> op) {
    Op& instance = *op;
    fill(instance, r.source);
    // Moved, not copied: the count lives on a line every member touches.
    r.collective = std::move(op);
    instance.arrive(r.source, r.owner, &r);
  };
  const CallNumber number = comm->local_of_caller().next_instance_call();
  collective::note_nonblocking_call(*comm, number.call);
  if (persistent) {
    std::shared_ptr<Series> series =
        join<Series>(comm, number, function, [] { return std::make_shared<Series>(); });
    request->persistent = true;
    request->restart = [series, start, make, size, function,
                        starts = std::uint64_t{0}](Request& r) mutable {
      start(r, series->starts.join_start<Op>(starts++, size, function, make));
    };
  } else {
    start(*request, join<Op>(comm, number, function, make));
  }
  *handle = request;
  return MPI_SUCCESS;
}

}  // namespace weft::mpi::nbc
