// The thread-local blocks a user thread owns (weft/thread_storage.h): one per registered module
// whose thread-local variables the thread touched, and the destructors its code registered for
// objects in them (C++ thread_local with a destructor).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace weft::detail {

struct Fiber;

// The shape of a registered module's thread-local block: its PT_TLS segment.
struct TlsModule {
  const std::byte* image = nullptr;  // initial values of the first image_size bytes
  std::size_t image_size = 0;
  std::size_t size = 0;  // the rest is zero-filled
  std::size_t align = 1;
};

class ThreadStorage {
 public:
  ThreadStorage() = default;
  // Frees the blocks; run_destructors() comes first.
  ~ThreadStorage();
  ThreadStorage(const ThreadStorage&) = delete;
  ThreadStorage& operator=(const ThreadStorage&) = delete;

  // The thread's block of `module` (id `id`), allocated and initialized at its first use.
  std::byte* block(std::size_t id, const TlsModule& module);
  bool holds(const void* address) const noexcept;
  void add_destructor(void (*destructor)(void*), void* object);
  // Newest first, as the C library does, including those registered meanwhile.
  void run_destructors();

 private:
  struct Block {
    std::size_t id;
    std::byte* data;
    std::size_t size;
    std::size_t align;
  };
  std::vector<Block> blocks_;
  std::vector<std::pair<void (*)(void*), void*>> destructors_;
};

// Runs `fiber`'s thread-local destructors and frees its blocks; called by the thread itself once
// its body has returned (a destructor may block).
void release_thread_storage(Fiber& fiber);

}  // namespace weft::detail
