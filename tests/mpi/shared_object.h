// An object that every rank of a test's job sees, in whichever process the rank runs: it lives in
// a shared anonymous mapping, made by the test before the job starts, so that the processes a
// spread job forks (process_job.h) inherit it shared instead of copied. Ranks of different
// processes may wait for each other through it (a flag, a step counter, a count of arrivals), and
// the test may read after the job what the ranks wrote into it. Only for objects that hold no
// pointer to other memory: atomics, plain values, fixed arrays of them; a std::vector's elements
// would stay private to each process.
#pragma once

#include <sys/mman.h>

#include <new>
#include <type_traits>
#include <utility>

#include "weft/error.h"

namespace weft::testing {

template <class T>
class Shared {
  static_assert(std::is_standard_layout_v<T>, "Shared<T> is for plain objects and atomics");

 public:
  template <class... Args>
  explicit Shared(Args&&... args) {
    void* memory =
        ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw Error("Shared: mmap of a shared page failed");
    object_ = new (memory) T(std::forward<Args>(args)...);
  }
  ~Shared() {
    object_->~T();
    ::munmap(object_, sizeof(T));
  }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;

  T& operator*() const { return *object_; }
  T* operator->() const { return object_; }

 private:
  T* object_;
};

}  // namespace weft::testing
