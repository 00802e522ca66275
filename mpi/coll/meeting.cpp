#include "coll/meeting.h"

#include <mutex>
#include <string>

#include "coll/fan_ring.h"
#include "coll/pair_nbc.h"
#include "coll/pair_ring.h"
#include "init/fatal.h"
#include "init/world.h"

namespace weft::mpi {

namespace {

std::string out_of_order_message(std::uint64_t call, std::string_view function,
                                 std::string_view other) {
  return "collective calls out of order: rank " + std::to_string(caller_world_rank()) +
         "'s collective call #" + std::to_string(call) + " on a communicator is " +
         std::string(function) + " where another member's is " + std::string(other) +
         ", expected every member to call the same collectives in the same order (MPI-3.1 "
         "5.12: a nonblocking collective matches only the same nonblocking collective)";
}

}  // namespace

Meeting::Meeting(int size) : size_(size), slots_(new Slot[size]) {}

void Meeting::publish(int rank, const void* args) {
  // release: a reader that sees the pointer sees what it points to.
  slots_[rank].args.store(args, std::memory_order_release);
  slots_[rank].published.set();
}

const void* Meeting::arguments(int rank) {
  Slot& slot = slots_[rank];
  // acquire: pairs with publish().
  if (const void* args = slot.args.load(std::memory_order_acquire)) return args;
  slot.published.wait();
  return slot.args.load(std::memory_order_acquire);
}

const void* Meeting::try_arguments(int rank) const {
  return slots_[rank].args.load(std::memory_order_acquire);  // acquire: pairs with publish()
}

void Meeting::unpublish(int rank) {
  // relaxed: the next call's members reach the slot through the ring entry's release and acquire.
  slots_[rank].args.store(nullptr, std::memory_order_relaxed);
  slots_[rank].published.clear();
}

namespace {

// A nonblocking call's note in the ring entry of its place (RingEntry::nonblocking): the place and
// the call number in one word, so that a reader gets the two of one call. Each is kept modulo
// 2^31 and 2^32 and compared as serial numbers (the members of a communicator are never 2^30
// calls apart); the top bit tells a note from none.
constexpr std::uint64_t kNoted = std::uint64_t{1} << 63;

std::uint64_t note_of(const CallNumber& number) {
  return kNoted | (number.place & 0x7fffffff) << 32 | (number.call & 0xffffffff);
}

// Positive when note a was made at a later place than note b, zero at the same place.
std::int32_t places_after(std::uint64_t a, std::uint64_t b) {
  // Shifted left: the 31-bit difference in the sign bit's place.
  return static_cast<std::int32_t>(static_cast<std::uint32_t>((a >> 32) - (b >> 32)) << 1);
}

std::int32_t calls_after(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b));
}

// Whether `note` shows a nonblocking call at the place of blocking call `number` with its number
// or a later one. Every member's calls before its blocking call at place p are then the same
// ones; so a member's nonblocking call at place p numbered n or more is another kind of call than
// this one, numbered n, wherever the two first differ.
bool covers(std::uint64_t note, const CallNumber& number) {
  const std::uint64_t mine = note_of(number);
  return (note & kNoted) != 0 && places_after(note, mine) == 0 && calls_after(note, mine) >= 0;
}

}  // namespace

MeetingTable::MeetingTable() {
  for (int i = 0; i < kRing; ++i) ring_[i].turn.store(i, std::memory_order_relaxed);
}

MeetingTable::~MeetingTable() {
  // relaxed: the members are done with the communicator.
  delete pair_ring_.load(std::memory_order_relaxed);
  delete fan_ring_.load(std::memory_order_relaxed);
  delete pair_nbc_.load(std::memory_order_relaxed);
}

namespace {

// The ring `slot` owns, made by the first member to ask.
template <class Ring, class... Args>
Ring& made_once(std::atomic<Ring*>& slot, Args... args) {
  // acquire: pairs with the compare-and-swap's release, which publishes a constructed ring.
  if (Ring* ring = slot.load(std::memory_order_acquire)) return *ring;
  auto made = std::make_unique<Ring>(args...);
  Ring* expected = nullptr;
  // acq_rel: release publishes the ring made here; acquire, on failure, sees the other's.
  if (slot.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
    return *made.release();
  }
  return *expected;
}

}  // namespace

collective::PairRing& MeetingTable::pair_ring() {
  return made_once(pair_ring_);
}

collective::FanRing& MeetingTable::fan_ring(int size) {
  return made_once(fan_ring_, size);
}

collective::PairNbc& MeetingTable::pair_nbc() {
  return made_once(pair_nbc_);
}

MeetingRef MeetingTable::join(CallNumber number, int size, std::string_view function,
                              bool shared_by_all) {
  if (shared_by_all) return MeetingRef(std::make_unique<Meeting>(size));
  const int index = static_cast<int>(number.place % kRing);
  RingEntry& entry = ring_[index];
  // acquire: pairs with the release of the last member to leave the entry's previous place.
  if (entry.turn.load(std::memory_order_acquire) != number.place) {
    weft::wait_until([&] { return entry.turn.load(std::memory_order_acquire) == number.place; });
  }
  const std::uint64_t mine = number.call + 1;
  // acquire: pairs with the store that ends the first member's claim, below.
  std::uint64_t call = entry.call.load(std::memory_order_acquire);
  if (call == 0 && entry.call.compare_exchange_strong(call, kClaiming, std::memory_order_acquire)) {
    // The entry is the caller's alone until the store below: the members of the previous place
    // have left and those of this one wait for it.
    if (entry.meeting == nullptr || entry.meeting->size() != size) {
      entry.meeting = std::make_unique<Meeting>(size);
    }
    entry.function = function;
    // seq_cst: before the load of the note below, as a nonblocking call notes and then loads
    // the call (join_entry): one of the two sees the other.
    entry.call.store(mine, std::memory_order_seq_cst);
    if (covers(entry.nonblocking.load(std::memory_order_seq_cst), number)) {
      out_of_order(number.call, function);
    }
    return MeetingRef(this, entry.meeting.get(), index);
  }
  if (call == kClaiming) {
    weft::wait_until([&] {
      call = entry.call.load(std::memory_order_acquire);
      return call != kClaiming;
    });
  }
  if (call != mine) misplaced(number.call, function, call - 1, entry.function);
  return MeetingRef(this, entry.meeting.get(), index);
}

void MeetingTable::leave(int index) {
  RingEntry& entry = ring_[index];
  // Read first: once the last member has left, the entry (and the communicator) may be reused or
  // freed.
  const int size = entry.meeting->size();
  // acq_rel: the last member to leave sees every member's last use of the meeting.
  if (entry.left.fetch_add(1, std::memory_order_acq_rel) + 1 < size) return;
  // relaxed: published by the release below.
  entry.left.store(0, std::memory_order_relaxed);
  entry.call.store(0, std::memory_order_relaxed);
  entry.meeting->shared.reset();
  const std::uint64_t place = entry.turn.load(std::memory_order_relaxed);
  // release: the next place's members see the entry as this one's left it.
  entry.turn.store(place + kRing, std::memory_order_release);
}

std::string MeetingTable::nonblocking_name(std::uint64_t call) {
  if (const std::string_view function = instances_.function_of(call); !function.empty()) {
    return std::string(function);
  }
  // acquire: pairs with made_once's release.
  if (collective::PairNbc* pair = pair_nbc_.load(std::memory_order_acquire)) {
    if (const std::string_view function = pair->function_of(call); !function.empty()) {
      return std::string(function);
    }
  }
  std::lock_guard lock(mutex_);
  if (auto found = entries_.find(call); found != entries_.end()) {
    return std::string(found->second.function);
  }
  return "a nonblocking collective";
}

void MeetingTable::out_of_order(std::uint64_t call, std::string_view function) {
  end_job(out_of_order_message(call, function, nonblocking_name(call)));
}

void MeetingTable::out_of_order(std::uint64_t call, std::string_view function,
                                std::string_view other) {
  end_job(out_of_order_message(call, function, other));
}

void MeetingTable::misplaced(std::uint64_t mine, std::string_view function, std::uint64_t other,
                             std::string_view other_function) {
  // The lower of the two numbers is a blocking call of one member and a nonblocking one of the
  // other: the other member's blocking call at this place comes later in its order.
  if (mine < other) out_of_order(mine, function);
  end_job(out_of_order_message(other, nonblocking_name(other), other_function));
}

std::shared_ptr<void> MeetingTable::join_entry(std::uint64_t key, std::uint64_t call, int size,
                                               const std::type_info& type,
                                               std::string_view function,
                                               const std::function<std::shared_ptr<void>()>& make,
                                               const CallNumber* number) {
  std::unique_lock lock(mutex_);
  Entry& entry = entries_[key];
  if (entry.object == nullptr) {
    entry.object = make();
    entry.type = &type;
    entry.function = function;
  } else if (*entry.type != type) {
    end_job(out_of_order_message(call, function, entry.function));
  }
  std::shared_ptr<void> object = entry.object;
  if (++entry.joined == size) entries_.erase(key);
  lock.unlock();
  if (number != nullptr) note_nonblocking(*number, function);
  return object;
}

std::shared_ptr<void> MeetingTable::join_instance(
    std::uint64_t sequence, std::uint64_t call, int size, const std::type_info& type,
    std::string_view function, const std::function<std::shared_ptr<void>()>& make,
    const CallNumber* number) {
  InstanceRing::Joined joined = instances_.join(sequence, call, size, type, function, make);
  switch (joined.outcome) {
    case InstanceRing::Outcome::joined:
      break;
    case InstanceRing::Outcome::diverted:
      return join_entry(call, call, size, type, function, make, number);
    case InstanceRing::Outcome::other_kind:
      end_job(out_of_order_message(call, function, joined.other_function));
    case InstanceRing::Outcome::other_call:
      // The two members' calls before this one differ: the lower number is this kind of call at
      // one member and another kind (a blocking one) at the other.
      if (call < joined.other_call)
        end_job(out_of_order_message(call, function, "another collective"));
      end_job(out_of_order_message(joined.other_call, "another collective", joined.other_function));
  }
  if (number != nullptr) note_nonblocking(*number, function);
  return std::move(joined.object);
}

void MeetingTable::note_nonblocking(const CallNumber& number, std::string_view function) {
  // Note the call in the ring entry of its place, unless a call at a later place or a later call
  // at this place is noted there (a member past this place has met in it, and any mismatch with
  // this call shows there).
  RingEntry& ring = ring_[number.place % kRing];
  const std::uint64_t note = note_of(number);
  std::uint64_t noted = ring.nonblocking.load(std::memory_order_relaxed);
  while ((noted & kNoted) == 0 || places_after(note, noted) > 0 ||
         (places_after(note, noted) == 0 && calls_after(note, noted) > 0)) {
    // seq_cst: before the load of the call below, as a blocking place's first member writes the
    // call and then loads the note (join): one of the two sees the other.
    if (ring.nonblocking.compare_exchange_weak(noted, note, std::memory_order_seq_cst,
                                               std::memory_order_relaxed)) {
      break;
    }
  }
  // A blocking call of another member with this number: whatever place it has, this member's
  // call of that number is of another kind. Its first member wrote `function` before the call.
  if (ring.call.load(std::memory_order_seq_cst) == number.call + 1) {
    end_job(out_of_order_message(number.call, function, ring.function));
  }
}

}  // namespace weft::mpi
