#include "weft/stack_pool.h"

#include <link.h>
#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "weft/error.h"

namespace weft {

namespace {

constexpr std::uint64_t kCanaryWord = 0x5745465443414e59;  // "WEFTCANY"
constexpr std::size_t kCanaryWords = 8;
// Stacks are carved from slabs, one mapping each: the first slab of a (node, size) class holds
// this many stacks and each next one twice as many as the one before, up to kMaxSlabStacks, so
// that 100 000 stacks take a few dozen mappings and a small job reserves little address space.
constexpr std::size_t kFirstSlabStacks = 64;
constexpr std::size_t kMaxSlabStacks = 8192;
#ifndef MADV_GUARD_INSTALL
constexpr int MADV_GUARD_INSTALL = 102;  // Linux 6.13; glibc 2.36's headers do not have it
#endif
// Mappings left to the rest of the process (libraries, malloc arenas, rank images) when the
// guarded-stack budget is derived from vm.max_map_count.
constexpr std::size_t kReservedMappings = 16384;

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_to_pages(std::size_t bytes) {
  const std::size_t page = page_size();
  return (bytes + page - 1) / page * page;
}

// Whether madvise(MADV_GUARD_INSTALL) works here: a guard region then lives inside its mapping
// (any access to it faults) and costs no mapping of its own, where an mprotect'ed guard page
// splits the mapping in two. Tried once on a scratch mapping.
bool kernel_has_guard_regions() {
  static const bool has = [] {
    const std::size_t page = page_size();
    void* probe = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (probe == MAP_FAILED) return false;
    const bool works = ::madvise(probe, page, MADV_GUARD_INSTALL) == 0;
    ::munmap(probe, 2 * page);
    return works;
  }();
  return has;
}

std::size_t default_max_guarded() {
  std::size_t max_maps = 65530;
  std::ifstream in("/proc/sys/vm/max_map_count");
  in >> max_maps;
  // A guarded stack is two mappings: the guard page and the stack above it.
  return max_maps > kReservedMappings ? (max_maps - kReservedMappings) / 2 : 0;
}

// glibc makes thread stacks executable when an object of the process asks for an executable
// stack (PT_GNU_STACK with PF_X): GCC's nested functions write trampolines on the stack and jump
// there. weft's stacks follow the objects loaded when the pool first maps one (the program and
// its libraries; a rank image is a copy of the program).
int stack_protection() {
  static const int protection = [] {
    bool executable = false;
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
          for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr)& segment = info->dlpi_phdr[i];
            if (segment.p_type == PT_GNU_STACK && (segment.p_flags & PF_X) != 0) {
              *static_cast<bool*>(data) = true;
            }
          }
          return 0;
        },
        &executable);
    return PROT_READ | PROT_WRITE | (executable ? PROT_EXEC : 0);
  }();
  return protection;
}

void* map_or_throw(std::size_t bytes, const char* what) {
  void* memory = ::mmap(nullptr, bytes, stack_protection(),
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (memory == MAP_FAILED) {
    throw Error(std::string("weft: cannot reserve ") + std::to_string(bytes) + " bytes for " +
                what + ": " + std::strerror(errno));
  }
  return memory;
}

// Written when a canary stack is handed out rather than when it is returned, so that a returned
// stack whose pages went back to the system is not touched again until it is used.
void arm_canary(const Stack& stack) {
  auto* words = static_cast<std::uint64_t*>(stack.base);
  for (std::size_t w = 0; w < kCanaryWords; ++w) words[w] = kCanaryWord;
}

}  // namespace

bool Stack::contains(const void* address) const {
  auto* p = static_cast<const char*>(address);
  return p >= static_cast<const char*>(base) && p < static_cast<const char*>(top());
}

bool Stack::in_guard(const void* address) const {
  if (guard == nullptr) return false;
  auto* p = static_cast<const char*>(address);
  auto* g = static_cast<const char*>(guard);
  return p >= g && p < g + page_size();
}

bool Stack::canary_words_intact() const {
  auto* words = static_cast<const std::uint64_t*>(base);
  for (std::size_t i = 0; i < kCanaryWords; ++i) {
    if (words[i] != kCanaryWord) return false;
  }
  return true;
}

struct StackPool::Impl {
  StackPoolOptions options;
  GuardKind guard_kind = GuardKind::kNone;
  std::size_t max_guarded;

  std::mutex mutex;
  // Free stacks by (node, size); a canary stack is never unmapped alone since it shares a slab.
  std::map<std::pair<int, std::size_t>, std::vector<Stack>> free;
  std::vector<std::pair<void*, std::size_t>> slabs;
  // Slabs mapped so far per (node, size, guarded), which sets the size of the next one.
  std::map<std::tuple<int, std::size_t, bool>, std::size_t> slab_counts;
  std::size_t in_use = 0;
  std::size_t guarded_in_use = 0;
  std::size_t guarded_mapped = 0;

  void bind(void* memory, std::size_t bytes, int numa) const {
    if (numa < 0 || numa >= static_cast<int>(options.node_os_index.size())) return;
    const int os_node = options.node_os_index[numa];
    unsigned long mask[16] = {};
    constexpr int kBits = 8 * sizeof(unsigned long);
    if (os_node < 0 || os_node >= 16 * kBits) return;
    mask[os_node / kBits] = 1UL << (os_node % kBits);
    // MPOL_PREFERRED: first touch lands on the node while it has memory, elsewhere after that,
    // rather than failing a thread's stack growth when one node is full.
    ::mbind(memory, bytes, MPOL_PREFERRED, mask, 16 * kBits, 0);
  }

  Stack map_guarded(std::size_t size, int numa) {
    const std::size_t page = page_size();
    void* memory = map_or_throw(size + page, "a guarded thread stack");
    if (::mprotect(memory, page, PROT_NONE) != 0) {
      const int err = errno;
      ::munmap(memory, size + page);
      throw Error(std::string("weft: cannot set up the guard page of a thread stack: ") +
                  std::strerror(err) + "; lower stack.max_guarded or set stack.guard=false");
    }
    Stack stack;
    stack.guard = memory;
    stack.base = static_cast<char*>(memory) + page;
    stack.size = size;
    stack.numa = numa;
    bind(stack.base, size, numa);
    ++guarded_mapped;
    return stack;
  }

  // Maps the next slab of stacks of `size` on `numa`, each with a guard region below it when
  // `guarded` (MADV_GUARD_INSTALL, inside the slab's one mapping) and a canary otherwise; keeps all
  // but one in the free list.
  Stack map_slab(std::size_t size, int numa, bool guarded) {
    const std::size_t page = page_size();
    const std::size_t stride = size + (guarded ? page : 0);
    std::size_t& count = slab_counts[{numa, size, guarded}];
    std::size_t stacks =
        std::min(kFirstSlabStacks << std::min<std::size_t>(count, 20), kMaxSlabStacks);
    // An explicit stack.max_guarded is kept to the stack.
    if (guarded) stacks = std::min(stacks, max_guarded - guarded_mapped);
    const std::size_t bytes = stride * stacks;
    void* memory = map_or_throw(bytes, "a slab of thread stacks");
    bind(memory, bytes, numa);
    slabs.emplace_back(memory, bytes);
    ++count;
    auto& list = free[{numa, size}];
    // Handed out from the low end: the list is a stack, so the slab's first stack goes last.
    Stack first;
    for (std::size_t i = stacks; i-- > 0;) {
      char* at = static_cast<char*>(memory) + i * stride;
      Stack stack;
      stack.base = at + (guarded ? page : 0);
      stack.size = size;
      stack.numa = numa;
      if (guarded) {
        if (::madvise(at, page, MADV_GUARD_INSTALL) != 0) {
          throw Error(std::string("weft: cannot install the guard page of a thread stack: ") +
                      std::strerror(errno) + "; set stack.guard=false");
        }
        stack.guard = at;
      }
      if (i == 0) {
        first = stack;
      } else {
        list.push_back(stack);
      }
    }
    if (guarded) {
      guarded_mapped += stacks;
    } else {
      arm_canary(first);
    }
    return first;
  }
};

StackPool::StackPool(StackPoolOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (impl_->options.guard_pages) {
    impl_->guard_kind = impl_->options.guard_regions && kernel_has_guard_regions()
                            ? GuardKind::kInsideMapping
                            : GuardKind::kOwnMapping;
  }
  switch (impl_->guard_kind) {
    case GuardKind::kNone:
      impl_->max_guarded = 0;
      break;
    case GuardKind::kInsideMapping:
      impl_->max_guarded = impl_->options.max_guarded != 0
                               ? impl_->options.max_guarded
                               : std::numeric_limits<std::size_t>::max();
      break;
    case GuardKind::kOwnMapping:
      impl_->max_guarded =
          impl_->options.max_guarded != 0 ? impl_->options.max_guarded : default_max_guarded();
      break;
  }
}

StackPool::~StackPool() {
  const std::size_t page = page_size();
  if (impl_->guard_kind == GuardKind::kOwnMapping) {
    for (auto& [key, list] : impl_->free) {
      for (const Stack& stack : list) {
        if (stack.guard != nullptr) ::munmap(stack.guard, stack.size + page);
      }
    }
  }
  for (auto [memory, bytes] : impl_->slabs) ::munmap(memory, bytes);
}

Stack StackPool::acquire(std::size_t size, int numa) {
  size = round_to_pages(size);
  std::lock_guard lock(impl_->mutex);
  ++impl_->in_use;
  auto it = impl_->free.find({numa, size});
  if (it != impl_->free.end() && !it->second.empty()) {
    auto& list = it->second;
    Stack stack = list.back();
    list.pop_back();
    if (stack.guard != nullptr) {
      ++impl_->guarded_in_use;
    } else {
      arm_canary(stack);
    }
    return stack;
  }
  try {
    const bool guarded = impl_->guarded_mapped < impl_->max_guarded;
    if (guarded && impl_->guard_kind == GuardKind::kOwnMapping) {
      ++impl_->guarded_in_use;
      return impl_->map_guarded(size, numa);
    }
    Stack stack = impl_->map_slab(size, numa, guarded);
    if (guarded) ++impl_->guarded_in_use;
    return stack;
  } catch (...) {
    --impl_->in_use;
    throw;
  }
}

void StackPool::release(const Stack& stack) {
  std::lock_guard lock(impl_->mutex);
  --impl_->in_use;
  auto& list = impl_->free[{stack.numa, stack.size}];
  if (stack.guard != nullptr && impl_->guard_kind == GuardKind::kInsideMapping) {
    --impl_->guarded_in_use;
  }
  if (stack.guard == nullptr || impl_->guard_kind == GuardKind::kInsideMapping) {
    // A slab cannot be unmapped piecemeal; past the cache's size its pages go back to the
    // system instead (the canary is written again when the stack is next handed out; a guard
    // region stays through MADV_DONTNEED).
    if (list.size() >= impl_->options.cached_per_class)
      ::madvise(stack.base, stack.size, MADV_DONTNEED);
    list.push_back(stack);
    return;
  }
  --impl_->guarded_in_use;
  if (list.size() < impl_->options.cached_per_class) {
    list.push_back(stack);
    return;
  }
  ::munmap(stack.guard, stack.size + page_size());
  --impl_->guarded_mapped;
}

std::size_t StackPool::in_use() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->in_use;
}

std::size_t StackPool::guarded_in_use() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->guarded_in_use;
}

std::size_t StackPool::max_guarded() const {
  return impl_->max_guarded;
}

GuardKind StackPool::guard_kind() const {
  return impl_->guard_kind;
}

}  // namespace weft
