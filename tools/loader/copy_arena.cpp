#include "copy_arena.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

#include "weft/error.h"
#include "weft/preemption.h"

namespace weft::tools {

namespace {

// What the lookups by address need of an arena. Written once, before the arena is counted in
// `arena_count`, and never changed: the unwinder reads them without a lock, from any thread.
struct ArenaRecord {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  std::size_t stride = 0;
  std::uintptr_t template_base = 0;
  std::uintptr_t eh_frame = 0;
  void* template_map = nullptr;
};

// A job's ranks take one arena; MPI_Comm_spawn adds one per program and per 64 spawned ranks.
constexpr std::size_t kMaxArenas = 4096;
ArenaRecord arenas[kMaxArenas];
std::atomic<std::size_t> arena_count{0};
std::mutex registering;

// The arena holding `address`, or null.
const ArenaRecord* arena_of(std::uintptr_t address) {
  // Acquire: the records below the count are complete.
  const std::size_t count = arena_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < count; ++i) {
    if (address >= arenas[i].begin && address < arenas[i].end) return &arenas[i];
  }
  return nullptr;
}

std::uintptr_t copy_base(const ArenaRecord& arena, std::uintptr_t address) {
  return arena.begin + (address - arena.begin) / arena.stride * arena.stride;
}

// glibc's definitions, which ours stand in front of (libweft_loader comes before ld.so and libc
// in the process's lookup order).
template <class Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

using FindObject = int (*)(void*, dl_find_object*);
using AddressInfo = int (*)(const void*, Dl_info*);

FindObject real_find_object() {
  static const FindObject real = next_definition<FindObject>("_dl_find_object");
  return real;
}

AddressInfo real_dladdr() {
  static const AddressInfo real = next_definition<AddressInfo>("dladdr");
  return real;
}

}  // namespace

CopyArena::CopyArena(std::size_t slots, std::size_t stride, std::size_t alignment,
                     std::uintptr_t template_base, std::uintptr_t eh_frame, void* template_map,
                     bool writable_code)
    : slots_(slots), stride_(stride), executable_(writable_code) {
  // Resolved now, outside any unwinding.
  real_find_object();
  real_dladdr();
  const std::size_t bytes = slots * stride + alignment;
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void* memory = writable_code
                     ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE | PROT_EXEC, kFlags, -1, 0)
                     : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, kFlags, -1, 0);
  if (writable_code && memory == MAP_FAILED && (errno == EACCES || errno == EPERM)) {
    // A policy against writable code (SELinux's execmem, PaX): each copy's code is then
    // protected on its own, at the cost of its own mappings.
    executable_ = false;
    memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, kFlags, -1, 0);
  }
  if (memory == MAP_FAILED) {
    throw Error("cannot reserve " + std::to_string(bytes) + " bytes for " + std::to_string(slots) +
                " copies of the program: " + std::strerror(errno));
  }
  const auto address = reinterpret_cast<std::uintptr_t>(memory);
  memory_ = reinterpret_cast<char*>((address + alignment - 1) / alignment * alignment);
  const std::lock_guard lock(registering);
  const std::size_t index = arena_count.load(std::memory_order_relaxed);
  if (index == kMaxArenas) {
    ::munmap(memory, bytes);
    throw Error("more than " + std::to_string(kMaxArenas) + " arenas of program copies");
  }
  ArenaRecord& record = arenas[index];
  record.begin = reinterpret_cast<std::uintptr_t>(memory_);
  record.end = record.begin + slots * stride;
  record.stride = stride;
  record.template_base = template_base;
  record.eh_frame = eh_frame;
  record.template_map = template_map;
  arena_count.store(index + 1, std::memory_order_release);
  // The copies' code is the program's own: a rank or worker spinning in it for a teammate on its
  // core can be switched out (weft/preemption.h).
  weft::allow_preemption_in(memory_, slots * stride);
}

char* CopyArena::take() {
  return memory_ + used_++ * stride_;
}

}  // namespace weft::tools

// For libgcc's unwinder: where the code at `address` and its unwind tables are.
extern "C" int _dl_find_object(void* address, dl_find_object* result) noexcept {
  using namespace weft::tools;
  const ArenaRecord* arena = arena_of(reinterpret_cast<std::uintptr_t>(address));
  if (arena == nullptr) {
    const FindObject real = real_find_object();
    return real != nullptr ? real(address, result) : -1;
  }
  const std::uintptr_t base = copy_base(*arena, reinterpret_cast<std::uintptr_t>(address));
  std::memset(result, 0, sizeof *result);
  result->dlfo_map_start = reinterpret_cast<void*>(base);
  result->dlfo_map_end = reinterpret_cast<void*>(base + arena->stride);
  result->dlfo_link_map = static_cast<link_map*>(arena->template_map);
  result->dlfo_eh_frame =
      arena->eh_frame != 0 ? reinterpret_cast<void*>(base + arena->eh_frame) : nullptr;
  return 0;
}

// The symbol of an address in a copy is the template's at the same offset.
extern "C" int dladdr(const void* address, Dl_info* info) noexcept {
  using namespace weft::tools;
  const AddressInfo real = real_dladdr();
  if (real == nullptr) return 0;
  const ArenaRecord* arena = arena_of(reinterpret_cast<std::uintptr_t>(address));
  if (arena == nullptr) return real(address, info);
  const std::uintptr_t base = copy_base(*arena, reinterpret_cast<std::uintptr_t>(address));
  const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(address) - base;
  const int found = real(reinterpret_cast<const void*>(arena->template_base + offset), info);
  if (found == 0) return 0;
  info->dli_fbase = reinterpret_cast<void*>(base);
  if (info->dli_saddr != nullptr) {
    info->dli_saddr = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(info->dli_saddr) -
                                              arena->template_base + base);
  }
  return found;
}
