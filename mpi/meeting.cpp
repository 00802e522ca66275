#include "meeting.h"

#include <mutex>

namespace weft::mpi {

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

std::shared_ptr<Meeting> MeetingTable::join(std::uint64_t call, int size) {
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[call];
  if (!entry.meeting) entry.meeting = std::make_shared<Meeting>(size);
  std::shared_ptr<Meeting> meeting = entry.meeting;
  if (++entry.joined == size) entries_.erase(call);
  return meeting;
}

}  // namespace weft::mpi
