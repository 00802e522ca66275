#include "interop/handle_table.h"

#include <mutex>
#include <string>

#include "errhan/error.h"

namespace weft::mpi::interop {

HandleSlots::HandleSlots(std::span<void* const> predefined)
    : predefined_count_(static_cast<int>(predefined.size())),
      segments_(std::make_unique<std::atomic<Segment*>[]>(kSegments)),
      next_(predefined_count_ + 1) {
  for (int i = 0; i < predefined_count_; ++i) {
    store(i + 1, predefined[i]);
    integers_.emplace(predefined[i], Entry{i + 1, 0});
  }
}

void HandleSlots::store(MPI_Fint handle, void* object) {
  auto index = static_cast<std::uint32_t>(handle);
  auto& segment_slot = segments_[index >> kSegmentBits];
  // relaxed: only writers, under lock_, store segments; the release store publishes it.
  Segment* segment = segment_slot.load(std::memory_order_relaxed);
  if (segment == nullptr) {
    segment =
        new Segment{};  // never freed: a reader may hold it (the table lives as long as libweft)
    segment_slot.store(segment, std::memory_order_release);
  }
  (*segment)[index & (kSegmentSize - 1)].store(object, std::memory_order_release);
}

MPI_Fint HandleSlots::integer(void* object) {
  {
    std::lock_guard guard(lock_);
    auto [it, added] = integers_.emplace(object, Entry{0, 1});
    if (!added) {
      ++it->second.holders;
      return it->second.handle;
    }
    MPI_Fint handle = 0;
    if (!free_.empty()) {
      handle = free_.front();
      free_.pop_front();
    } else if (next_ < kSegments * kSegmentSize) {
      handle = next_++;
    }
    if (handle != 0) {
      it->second.handle = handle;
      store(handle, object);
      return handle;
    }
    integers_.erase(it);
  }
  // Outside the lock: a user error handler may convert handles itself.
  raise(MPI_COMM_NULL, "MPI_*_c2f", MPI_ERR_INTERN,
        "more than " + std::to_string(kSegments * kSegmentSize - 1) +
            " handles of one kind are in Fortran's hands at once");
  return 0;
}

void HandleSlots::take_back(MPI_Fint handle) {
  if (handle <= predefined_count_) return;
  std::lock_guard guard(lock_);
  void* object = this->object(handle);
  if (object == nullptr) return;
  auto it = integers_.find(object);
  if (--it->second.holders > 0) return;
  integers_.erase(it);
  store(handle, nullptr);
  free_.push_back(handle);
}

std::size_t HandleSlots::live() const {
  std::lock_guard guard(lock_);
  return integers_.size();
}

}  // namespace weft::mpi::interop
