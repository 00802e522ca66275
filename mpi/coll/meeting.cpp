#include "coll/meeting.h"

#include <mutex>
#include <string>

#include "init/fatal.h"
#include "init/world.h"

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
    end_job("collective calls out of order: rank " + std::to_string(caller_world_rank()) +
            "'s collective call #" + std::to_string(call) + " on a communicator is " +
            std::string(function) + " where another member's is " + std::string(entry.function) +
            ", expected every member to call the same collectives in the same order (MPI-3.1 "
            "5.12: a nonblocking collective matches only the same nonblocking collective)");
  }
  std::shared_ptr<void> object = entry.object;
  if (++entry.joined == size) entries_.erase(key);
  return object;
}

}  // namespace weft::mpi
