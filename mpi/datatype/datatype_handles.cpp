#include "datatype/datatype_handles.h"

#include <mutex>
#include <vector>

#include "weft/detail/spin_lock.h"

namespace weft::mpi {
namespace {

// Last in, first out. Bounded: a program that frees many types at once gives memory back.
class HandlePool {
 public:
  weft_mpi_datatype* take(weft_mpi_datatype::Layout* layout) {
    {
      std::lock_guard lock(lock_);
      if (!free_.empty()) {
        weft_mpi_datatype* handle = free_.back();
        free_.pop_back();
        handle->layout = layout;
        return handle;
      }
    }
    return new weft_mpi_datatype{layout};
  }

  void give(weft_mpi_datatype* handle) {
    handle->layout = nullptr;
    {
      std::lock_guard lock(lock_);
      if (free_.size() < kMaxFree) {
        free_.push_back(handle);
        return;
      }
    }
    delete handle;
  }

  ~HandlePool() {
    for (weft_mpi_datatype* handle : free_) delete handle;
  }

 private:
  static constexpr std::size_t kMaxFree = 1024;
  detail::SpinLock lock_;
  std::vector<weft_mpi_datatype*> free_;
};

HandlePool& pool() {
  // Never destroyed: a type may be released by a static destructor of the program.
  static HandlePool* const instance = new HandlePool;
  return *instance;
}

}  // namespace

weft_mpi_datatype* new_handle(weft_mpi_datatype::Layout* layout) {
  return pool().take(layout);
}

void recycle_handle(weft_mpi_datatype* handle) {
  pool().give(handle);
}

}  // namespace weft::mpi
