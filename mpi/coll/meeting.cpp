#include "coll/meeting.h"

#include <mutex>
#include <string>

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

MeetingTable::~MeetingTable() = default;

MeetingRef MeetingTable::join(std::uint64_t call, int size, std::string_view function,
                              bool shared_by_all) {
  if (shared_by_all) return MeetingRef(std::make_unique<Meeting>(size));
  const int slot = static_cast<int>(call % kRing);
  RingEntry& entry = ring_[slot];
  const std::uint64_t mine = call + 1;
  // acquire: pairs with the release that readied the entry (claim below) or freed it (leave()).
  std::uint64_t holder = entry.holder.load(std::memory_order_acquire);
  if (holder != mine) {
    auto claim = [&] {
      holder = entry.holder.load(std::memory_order_acquire);
      if (holder == mine) return true;
      if (holder != 0) return false;  // still readied, or members of call - kRing still leaving
      // acquire: see the state the last member to leave left; the entry is ours to ready.
      if (!entry.holder.compare_exchange_strong(holder, kClaiming, std::memory_order_acquire)) {
        return holder == mine;
      }
      if (entry.meeting == nullptr || entry.meeting->size() != size) {
        entry.meeting = std::make_unique<Meeting>(size);
      }
      entry.function = function;
      // seq_cst: ordered before the check of other_kind below, against a member of another
      // kind of call that sets other_kind and then reads holder (join_entry).
      entry.holder.store(mine, std::memory_order_seq_cst);
      holder = mine;
      return true;
    };
    if (!claim()) weft::wait_until(claim);
  }
  // seq_cst: see the store above; a member that found the entry readied reads other_kind after
  // the claimer's store, which is what join_entry pairs with.
  if (entry.other_kind.load(std::memory_order_seq_cst) >= mine) out_of_order(call, function);
  return MeetingRef(this, entry.meeting.get(), slot);
}

void MeetingTable::leave(int slot) {
  RingEntry& entry = ring_[slot];
  // Read first: once the last member has left, the entry (and the communicator) may be reused or
  // freed.
  const int size = entry.meeting->size();
  // acq_rel: the last member to leave sees every member's last use of the meeting.
  if (entry.left.fetch_add(1, std::memory_order_acq_rel) + 1 < size) return;
  entry.left.store(0, std::memory_order_relaxed);  // relaxed: published by the release below
  entry.meeting->shared.reset();
  // release: the next call's claimer sees the meeting as the members left it.
  entry.holder.store(0, std::memory_order_release);
}

void MeetingTable::out_of_order(std::uint64_t call, std::string_view function) {
  std::string other = "a nonblocking collective";
  {
    std::lock_guard lock(mutex_);
    if (auto found = entries_.find(call); found != entries_.end()) {
      other = std::string(found->second.function);
    }
  }
  end_job(out_of_order_message(call, function, other));
}

std::shared_ptr<void> MeetingTable::join_entry(std::uint64_t key, std::uint64_t call, int size,
                                               const std::type_info& type,
                                               std::string_view function,
                                               const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard lock(mutex_);
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
  if (key == call) {
    // A call number that a blocking call may hold in the ring: tell a blocking member of the
    // same call, or find it. seq_cst: the store is ordered before the load of holder, as the
    // blocking member's store of holder is before its load of other_kind, so that one of the
    // two sees the other.
    RingEntry& ring = ring_[call % kRing];
    std::uint64_t seen = ring.other_kind.load(std::memory_order_relaxed);
    while (seen < call + 1 &&
           !ring.other_kind.compare_exchange_weak(seen, call + 1, std::memory_order_seq_cst)) {
    }
    if (ring.holder.load(std::memory_order_seq_cst) == call + 1) {
      end_job(out_of_order_message(call, function, ring.function));
    }
  }
  return object;
}

}  // namespace weft::mpi
