// Where the members of a communicator meet for a collective call inside the process. The n-th
// collective call of every member (on one communicator) joins the same Meeting: each member
// publishes a description of its side of the call (buffers, counts, types), reads the others',
// and the members synchronise through the meeting's phases. Because ranks share the address
// space, a collective then copies straight between the members' buffers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "coll/instance_ring.h"
#include "request/completion.h"
#include "weft/sync.h"

namespace weft::mpi {

namespace collective {
class FanRing;
class PairNbc;
class PairRing;
}  // namespace collective

class Meeting {
 public:
  explicit Meeting(int size);

  int size() const { return size_; }

  // Publishes the caller's arguments for the others to read; `args` must stay valid until the
  // caller has passed the meeting's last phase that reads it.
  void publish(int rank, const void* args);
  // The arguments `rank` published, parking until it has.
  const void* arguments(int rank);
  template <class Args>
  const Args& arguments_of(int rank) {
    return *static_cast<const Args*>(arguments(rank));
  }
  // The arguments `rank` published, or nullptr when it has not yet.
  const void* try_arguments(int rank) const;
  // Forgets what `rank` published, once nobody reads it any more, so that the meeting can serve
  // another call (MeetingTable's ring).
  void unpublish(int rank);

  // Every member calls it; returns when all have. True in exactly one member per phase (the
  // last to arrive), which may then do work for all before the next phase.
  bool phase() {
    return phase([] {});
  }
  // The same, the last member to arrive running `work` before any member returns: work done by
  // one member for all (a small reduction, a few copies) then costs one wake-up of the others
  // instead of two phases.
  template <class Work>
  bool phase(Work&& work);
  // The same, for a caller that knows its slot (the one it publishes in) and its rank's spin
  // budget: a meeting of two then meets through the two slots alone (two_party_*).
  bool phase_as(int slot, SpinBudget& spin) {
    if (size_ != 2) return phase();
    return two_party_barrier(slot, spin);
  }
  template <class Work>
  bool phase_as(int slot, SpinBudget& spin, Work&& work);

  // One value for all members, written by one member before a phase and read after it.
  std::shared_ptr<void> shared;
  // While a trace records MPI calls: the recording clock read by the member that ran the phase's
  // work, before it let the others go (trace::read_stamp), which bounds every member's end of
  // an MPI_Barrier (mpi/coll/collective_barrier.cpp). Written and read as `shared` is.
  std::uint64_t trace_stamp = 0;

 private:
  // On lines of their own: its member writes it, the others read it.
  struct alignas(64) Slot {
    std::atomic<const void*> args{nullptr};
    // Of a meeting of two, on args' line, which the other member reads anyway: the phases this
    // member has arrived at (it only grows, so consecutive phases and calls need no reset), and
    // whether it is about to park on `wake` for the other's next arrival.
    std::atomic<std::uint64_t> phases{0};
    std::atomic<bool> sleeping{false};
    Event published;
    Event wake{Event::Mode::automatic};
  };
  // A meeting of two (2 ranks, the common small case) synchronises through the members' slots
  // alone: each writes its own line and reads the other's, so a phase hands over two lines (one
  // each way) where the counter and events of phase() hand over five or more (the counter twice,
  // the event's lock, flag and clear). A member that waits spins on the other's line for its
  // rank's budget, then parks on its own slot's `wake`, which the other sets when it sees it
  // sleeping: no lock nor event on the way of a wait that ends while spinning.
  bool two_party_barrier(int slot, SpinBudget& spin);
  // Stores this member's arrival at `phase` and wakes the other member if it sleeps.
  void two_party_arrive(int slot, std::uint64_t phase);
  // Returns once the other member has arrived at `phase`.
  void two_party_await(int slot, std::uint64_t phase, SpinBudget& spin);
  const int size_;
  std::unique_ptr<Slot[]> slots_;
  // The members of a phase wait on one of two events, alternately: when the last member of a
  // phase arrives, every member has left the previous phase, so its event can be cleared for the
  // next one.
  // Its own line: every arrival writes it, while size_ and slots_ are only read.
  alignas(64) std::atomic<int> arrived_{0};
  std::atomic<std::uint64_t> generation_{0};
  Event released_[2];
};

template <class Work>
bool Meeting::phase(Work&& work) {
  // acquire: pairs with the release below, for a member that ends a phase and starts the next.
  const std::uint64_t generation = generation_.load(std::memory_order_acquire);
  Event& released = released_[generation % 2];
  // acq_rel: the last arrival sees everything the others did before arriving.
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 < size_) {
    released.wait();
    return false;
  }
  // relaxed: the next phase's arrivals come after released.set(), which publishes it.
  arrived_.store(0, std::memory_order_relaxed);
  released_[(generation + 1) % 2].clear();
  work();
  generation_.store(generation + 1, std::memory_order_release);
  released.set();
  return true;
}

inline void Meeting::two_party_arrive(int slot, std::uint64_t phase) {
  // seq_cst (release at least: the other member, seeing the arrival, sees everything done before
  // it): against two_party_await's store of `sleeping` and load of the arrival, so that either
  // the sleeper sees this arrival or this load sees it sleeping.
  slots_[slot].phases.store(phase, std::memory_order_seq_cst);
  Slot& other = slots_[1 - slot];
  if (other.sleeping.load(std::memory_order_seq_cst)) other.wake.set();
}

inline void Meeting::two_party_await(int slot, std::uint64_t phase, SpinBudget& spin) {
  const Slot& other = slots_[1 - slot];
  // seq_cst (acquire at least: pairs with the arrival's release): see two_party_arrive.
  auto arrived = [&] { return other.phases.load(std::memory_order_seq_cst) >= phase; };
  if (arrived() || spin.spin_until(arrived)) return;
  Slot& mine = slots_[slot];
  mine.sleeping.store(true, std::memory_order_seq_cst);  // seq_cst: see two_party_arrive
  const std::int64_t parked_at = monotonic_ns();
  // A set left over from an earlier wait that ended without parking only costs one more look.
  while (!arrived()) mine.wake.wait();
  spin.parked(monotonic_ns() - parked_at);
  // relaxed: a wake-up the other member still sends finds the event set for the next wait,
  // which then looks once more.
  mine.sleeping.store(false, std::memory_order_relaxed);
}

inline bool Meeting::two_party_barrier(int slot, SpinBudget& spin) {
  // relaxed: only this member writes its own count.
  const std::uint64_t phase = slots_[slot].phases.load(std::memory_order_relaxed) + 1;
  two_party_arrive(slot, phase);
  two_party_await(slot, phase, spin);
  return slot == 1;
}

template <class Work>
bool Meeting::phase_as(int slot, SpinBudget& spin, Work&& work) {
  if (size_ != 2) return phase(std::forward<Work>(work));
  // Slot 1 works for both, whichever member comes last: choosing the last would take a shared
  // read-modify-write, a third line. Slot 0 announces itself and waits for slot 1's arrival,
  // which slot 1 writes only once the work is done.
  const std::uint64_t phase = slots_[slot].phases.load(std::memory_order_relaxed) + 1;  // above
  if (slot == 0) {
    two_party_arrive(slot, phase);
    two_party_await(slot, phase, spin);
    return false;
  }
  two_party_await(slot, phase, spin);
  work();
  two_party_arrive(slot, phase);  // publishes the work to slot 0
  return true;
}

class MeetingTable;

// A member's hold on the pooled Meeting of one blocking call (MeetingTable::join): the member
// leaves the meeting when the hold ends, and the last member to leave frees it for a later call.
class MeetingRef {
 public:
  MeetingRef(MeetingRef&& other) noexcept
      : table_(std::exchange(other.table_, nullptr)),
        meeting_(std::exchange(other.meeting_, nullptr)),
        owned_(std::move(other.owned_)),
        slot_(other.slot_),
        published_(other.published_) {}
  MeetingRef(const MeetingRef&) = delete;
  MeetingRef& operator=(const MeetingRef&) = delete;
  MeetingRef& operator=(MeetingRef&&) = delete;
  ~MeetingRef();

  Meeting* operator->() const { return meeting_; }
  Meeting& operator*() const { return *meeting_; }
  // Meeting::publish, remembering the member's slot so that leaving clears it for the next call.
  void publish(int rank, const void* args) {
    meeting_->publish(rank, args);
    published_ = rank;
  }

 private:
  friend class MeetingTable;
  MeetingRef(MeetingTable* table, Meeting* meeting, int slot)
      : table_(table), meeting_(meeting), slot_(slot) {}
  explicit MeetingRef(std::unique_ptr<Meeting> owned)
      : meeting_(owned.get()), owned_(std::move(owned)) {}

  MeetingTable* table_ = nullptr;  // null when the meeting is owned_
  Meeting* meeting_;
  std::unique_ptr<Meeting> owned_;
  int slot_ = 0;        // in the table's ring
  int published_ = -1;  // the member slot the holder published in, if any
};

// The numbers of one collective call of a member on a communicator. `call` counts all the
// member's collective calls there; `place` counts those of them that meet in the communicator's
// ring (blocking calls and communicator creations inside the process, MeetingTable::join). A call
// that does not meet in the ring takes no place and carries the place of the member's next one.
// `instance` counts likewise the calls that join an instance in the communicator's InstanceRing
// (nonblocking collectives and persistent inits inside the process). MPI-3.1 5.12 has every
// member make the same calls in the same order, so every member gives a call the same numbers.
struct CallNumber {
  std::uint64_t call = 0;
  std::uint64_t place = 0;
  std::uint64_t instance = 0;
};

// The meetings of one communicator. A blocking call or a communicator creation of the process's
// members meets in a Meeting of the table's ring; a nonblocking collective or a persistent init
// (mpi/coll/nbc.h) in the shared instance of its kind, found in the InstanceRing, or in a map by
// call number when the ring diverted it; a collective file access or a collective across
// processes in that map under a key of its own.
//
// The ring keeps a few Meetings from call to call: the blocking call at place p meets in entry
// p % kRing, once the members of place p - kRing have all left it, so the entry serves its places
// in order. A member finds it with one load; the first member of a place claims it with one
// compare-and-swap and writes the call number, which the others compare with theirs; the last
// member to leave hands it to place p + kRing. A small collective then costs no allocation, no
// map and no lock. Places are counted apart from call numbers because a blocking meeting may be
// joined late: MPI_Comm_idup numbers its call when issued and meets in a thread of its own, while
// the caller goes on with later calls, nonblocking ones or blocking ones at later places.
//
// A member whose call is of another kind than another member's call of the same number ends the
// job (the members would otherwise wait for one another forever): at a place, two members' call
// numbers differ; in the instance ring, two members' types or call numbers differ; in the map,
// two members' types differ; and between blocking and nonblocking calls, a nonblocking call
// notes its place and number in the ring entry of its place and then reads the call number there,
// while the first member of a blocking place writes its number and then reads the note.
class MeetingTable {
 public:
  MeetingTable();
  MeetingTable(const MeetingTable&) = delete;
  MeetingTable& operator=(const MeetingTable&) = delete;
  ~MeetingTable();

  // The meeting of a blocking call among `size` members, parking until the members of the
  // previous place of its ring entry have left; `function` names the call in the message of a
  // mismatch. With `shared_by_all` (MPI_COMM_SELF: one object whose every rank is its only
  // member), each caller meets alone in a meeting of its own.
  MeetingRef join(CallNumber number, int size, std::string_view function = "a blocking collective",
                  bool shared_by_all = false);
  // The call slots of a communicator of two members (mpi/coll/pair_ring.h), made by the first
  // member to ask.
  collective::PairRing& pair_ring();
  // The same for a communicator of `size` members, 3 to FanRing::kMaxMembers
  // (mpi/coll/fan_ring.h).
  collective::FanRing& fan_ring(int size);
  // The queue of the small nonblocking collectives of a communicator of two members
  // (mpi/coll/pair_nbc.h), made by the first member to ask.
  collective::PairNbc& pair_nbc();
  // Notes nonblocking call `number` in the ring entry of its place and ends the job when that
  // entry holds a blocking call of the same number (`function`: the caller's call). Joining an
  // instance notes its call; a nonblocking call that joins none notes it itself.
  void note_nonblocking(const CallNumber& number, std::string_view function);
  // Ends the job: the caller's collective call `call` (`function`) is of another kind than the
  // other members' (a nonblocking one, found by its number, or another blocking one).
  [[noreturn]] void out_of_order(std::uint64_t call, std::string_view function);
  // The same where the other member's call is known to be `other`.
  [[noreturn]] static void out_of_order(std::uint64_t call, std::string_view function,
                                        std::string_view other);
  // A nonblocking collective's shared object of type T, made by make() for the first member to
  // join: the members of the communicator's call `number` (from next_instance_call), checked
  // against the ring's blocking calls. A member whose call is of another kind than the first
  // member's ends the job (`function` names its call).
  template <class T, class Make>
  std::shared_ptr<T> join(CallNumber number, int size, std::string_view function, Make&& make) {
    return std::static_pointer_cast<T>(join_instance(number.instance, number.call, size, typeid(T),
                                                     function, erase(make), &number));
  }
  // The same for the `start`-th start of a persistent collective, whose starts meet in a table of
  // their own (nbc::Series).
  template <class T, class Make>
  std::shared_ptr<T> join_start(std::uint64_t start, int size, std::string_view function,
                                Make&& make) {
    return std::static_pointer_cast<T>(
        join_instance(start, start, size, typeid(T), function, erase(make), nullptr));
  }
  // The same under a key other than a call of the communicator (a collective between processes
  // meets under its message tag, a persistent request's starts by their count): `call` is only
  // what the error names.
  template <class T, class Make>
  std::shared_ptr<T> join(std::uint64_t key, std::uint64_t call, int size,
                          std::string_view function, Make&& make) {
    return std::static_pointer_cast<T>(
        join_entry(key, call, size, typeid(T), function, erase(make), nullptr));
  }

 private:
  friend class MeetingRef;
  static constexpr int kRing = 4;
  static constexpr std::uint64_t kClaiming = ~std::uint64_t{0};
  // One entry of the ring, on lines of its own: its members touch it once on joining and once
  // on leaving.
  struct alignas(64) RingEntry {
    // The place whose members meet in the entry now: its index at first, kRing more each time
    // the last member of a place leaves.
    std::atomic<std::uint64_t> turn{0};
    // The call number + 1 of that place, written by its first member: 0 before, kClaiming while
    // the first member readies the entry.
    std::atomic<std::uint64_t> call{0};
    std::atomic<int> left{0};  // members that have left the place
    std::unique_ptr<Meeting> meeting;
    std::string_view function;  // of the place's first member
    // The latest nonblocking call made at a place of this entry (note_nonblocking): read by a
    // place's first member, written by the first member of a nonblocking call, so on a line of
    // its own.
    alignas(64) std::atomic<std::uint64_t> nonblocking{0};
  };
  struct Entry {
    std::shared_ptr<void> object;
    const std::type_info* type = nullptr;
    std::string_view function;  // of the first member to join
    int joined = 0;
  };
  template <class Make>
  static std::function<std::shared_ptr<void>()> erase(Make& make) {
    return [&make]() -> std::shared_ptr<void> { return make(); };
  }
  void leave(int index);
  // The object of ring call `sequence` (InstanceRing::join), or of map entry `call` where the ring
  // diverts it; ends the job on a mismatch, as join_entry.
  std::shared_ptr<void> join_instance(std::uint64_t sequence, std::uint64_t call, int size,
                                      const std::type_info& type, std::string_view function,
                                      const std::function<std::shared_ptr<void>()>& make,
                                      const CallNumber* number);
  // The object of entry `key`, made if the entry is new, counted as joined by one more member;
  // ends the job when the entry's object is not of `type`, or when `number` (a call of the
  // communicator) is a blocking call of another member.
  std::shared_ptr<void> join_entry(std::uint64_t key, std::uint64_t call, int size,
                                   const std::type_info& type, std::string_view function,
                                   const std::function<std::shared_ptr<void>()>& make,
                                   const CallNumber* number);
  // The name of the nonblocking call `call` from the map, or a generic one.
  std::string nonblocking_name(std::uint64_t call);
  // Ends the job: two members met at one place with calls `mine` (the caller's, `function`) and
  // `other` (the place's first member's, `other_function`).
  [[noreturn]] void misplaced(std::uint64_t mine, std::string_view function, std::uint64_t other,
                              std::string_view other_function);

  RingEntry ring_[kRing];
  InstanceRing instances_;
  std::atomic<collective::PairRing*> pair_ring_{nullptr};  // owned
  std::atomic<collective::FanRing*> fan_ring_{nullptr};    // owned
  std::atomic<collective::PairNbc*> pair_nbc_{nullptr};    // owned
  Mutex mutex_;
  std::unordered_map<std::uint64_t, Entry> entries_;
};

inline MeetingRef::~MeetingRef() {
  if (table_ == nullptr) return;
  if (published_ >= 0) meeting_->unpublish(published_);
  table_->leave(slot_);
}

}  // namespace weft::mpi
