#include "thread_storage.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <link.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "fiber.h"
#include "park.h"
#include "weft/error.h"
#include "weft/thread_storage.h"

namespace weft::detail {

namespace {

// Registered modules by TLS module id, which glibc hands out densely from 1: chunks allocated at
// registration and never freed, so that a reader needs no lock.
constexpr std::size_t kChunkSize = 1024;
constexpr std::size_t kChunks = 64;
using Entry = std::atomic<const TlsModule*>;
std::array<std::atomic<Entry*>, kChunks> modules{};
std::mutex registration;

const TlsModule* registered(std::size_t id) noexcept {
  const std::size_t chunk = id / kChunkSize;
  if (chunk >= kChunks) return nullptr;
  // acquire: pairs with the release stores of registration, so the TlsModule is seen complete.
  const Entry* entries = modules[chunk].load(std::memory_order_acquire);
  return entries != nullptr ? entries[id % kChunkSize].load(std::memory_order_acquire) : nullptr;
}

// The PT_TLS segment of the loaded object whose module id is `id`.
bool find_module(std::size_t id, TlsModule& found) {
  struct Search {
    std::size_t id;
    TlsModule* found;
    bool ok = false;
  } search{id, &found};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        if (info->dlpi_tls_modid != search->id) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_TLS) continue;
          search->found->image =
              reinterpret_cast<const std::byte*>(info->dlpi_addr + segment.p_vaddr);
          search->found->image_size = segment.p_filesz;
          search->found->size = segment.p_memsz;
          search->found->align = segment.p_align > 1 ? segment.p_align : 1;
          search->ok = true;
        }
        return 1;
      },
      &search);
  return search.ok;
}

// The C library's definition of `name`, looked up in the C library itself: RTLD_NEXT would miss
// it when libweft comes after the C library in the lookup order (a program loaded with dlopen).
// The dynamic loader's (`library` null) through RTLD_NEXT: it comes after libweft in any order,
// every object depending on it through the C library, and glibc 2.36's dlsym on the loader's own
// handle does not find __tls_get_addr.
void* resolve(const char* library, const char* name) noexcept {
  void* handle = library != nullptr ? ::dlopen(library, RTLD_NOW | RTLD_NOLOAD) : RTLD_NEXT;
  void* symbol = handle != nullptr ? ::dlsym(handle, name) : nullptr;
  if (symbol == nullptr) {
    fatal(std::string("cannot find ") + (library != nullptr ? library : "the dynamic loader") +
          "'s " + name + "()");
  }
  return symbol;
}

struct TlsIndex {
  unsigned long module;
  unsigned long offset;
};

using TlsGetAddr = void* (*)(TlsIndex*);
using ThreadAtexit = int (*)(void (*)(void*), void*, void*);
// Resolved on first use. Every thread resolves the same address, so a race only repeats the
// lookup; relaxed suffices since the pointer is the only data published.
std::atomic<TlsGetAddr> loader_tls_get_addr{nullptr};
std::atomic<ThreadAtexit> libc_thread_atexit{nullptr};

template <class Function>
Function real(std::atomic<Function>& cache, const char* library, const char* name) noexcept {
  Function function = cache.load(std::memory_order_relaxed);
  if (function == nullptr) {
    function = reinterpret_cast<Function>(resolve(library, name));
    cache.store(function, std::memory_order_relaxed);
  }
  return function;
}

}  // namespace

ThreadStorage::~ThreadStorage() {
  for (const Block& block : blocks_) {
    ::operator delete(block.data, std::align_val_t(block.align));
  }
}

std::byte* ThreadStorage::block(std::size_t id, const TlsModule& module) {
  for (const Block& block : blocks_) {
    if (block.id == id) return block.data;
  }
  // A zero-sized segment still gets a distinct address, as glibc gives it.
  const std::size_t size = module.size > 0 ? module.size : 1;
  auto* data = static_cast<std::byte*>(::operator new(size, std::align_val_t(module.align)));
  std::memcpy(data, module.image, module.image_size);
  std::memset(data + module.image_size, 0, size - module.image_size);
  blocks_.push_back({id, data, size, module.align});
  return data;
}

bool ThreadStorage::holds(const void* address) const noexcept {
  const auto* byte = static_cast<const std::byte*>(address);
  for (const Block& block : blocks_) {
    if (byte >= block.data && byte < block.data + block.size) return true;
  }
  return false;
}

void ThreadStorage::add_destructor(void (*destructor)(void*), void* object) {
  destructors_.emplace_back(destructor, object);
}

void ThreadStorage::run_destructors() {
  while (!destructors_.empty()) {
    const auto [destructor, object] = destructors_.back();
    destructors_.pop_back();
    destructor(object);
  }
}

void release_thread_storage(Fiber& fiber) {
  if (fiber.storage == nullptr) return;
  fiber.storage->run_destructors();
  delete fiber.storage;
  fiber.storage = nullptr;
}

}  // namespace weft::detail

namespace weft {

void give_each_thread_own_tls(std::size_t module_id) {
  using namespace detail;
  const std::string what = "weft::give_each_thread_own_tls(" + std::to_string(module_id) + ")";
  if (module_id / kChunkSize >= kChunks) {
    throw Error(what + ": module ids above " + std::to_string(kChunkSize * kChunks - 1) +
                " are not supported");
  }
  auto module = std::make_unique<TlsModule>();
  if (module_id == 0 || !find_module(module_id, *module)) {
    throw Error(what + ": no loaded object has thread-local storage with this module id");
  }
  const std::lock_guard lock(registration);
  std::atomic<Entry*>& chunk = modules[module_id / kChunkSize];
  Entry* entries = chunk.load(std::memory_order_relaxed);
  if (entries == nullptr) {
    entries = new Entry[kChunkSize]();
    chunk.store(entries, std::memory_order_release);
  }
  // A module id glibc reuses after a dlclose gets the new object's shape; the old one's stays
  // allocated, since a thread may still be reading it.
  entries[module_id % kChunkSize].store(module.release(), std::memory_order_release);
}

}  // namespace weft

using weft::detail::Fiber;
using weft::detail::TlsIndex;

extern "C" {

// Called by the code of shared objects for their dynamic TLS. Compiled code may call it with a
// stack that is not 16-byte aligned (glibc's own version realigns it), hence
// force_align_arg_pointer.
__attribute__((force_align_arg_pointer)) void* __tls_get_addr(TlsIndex* index) {
  using namespace weft::detail;
  if (const TlsModule* module = registered(index->module)) {
    if (Fiber* self = current_fiber()) {
      if (self->storage == nullptr) self->storage = new ThreadStorage;
      return self->storage->block(index->module, *module) + index->offset;
    }
  }
  return real(loader_tls_get_addr, nullptr, "__tls_get_addr")(index);
}

// libstdc++ registers the destructor of a thread_local object here at its construction. One that
// lives in a user thread's own block must be destroyed when that thread ends, not when its
// kernel thread does (the block is gone by then).
int __cxa_thread_atexit_impl(void (*destructor)(void*), void* object, void* dso_symbol) {
  using namespace weft::detail;
  Fiber* self = current_fiber();
  if (self != nullptr && self->storage != nullptr && self->storage->holds(object)) {
    self->storage->add_destructor(destructor, object);
    return 0;
  }
  return real(libc_thread_atexit, LIBC_SO, "__cxa_thread_atexit_impl")(destructor, object,
                                                                       dso_symbol);
}

}  // extern "C"
