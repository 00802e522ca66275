// Stacks for user-level threads: carved from large slabs reserved with mmap (committed lazily,
// page by page, as the thread touches them), each with a guard page below it set up once, and kept
// in a pool per NUMA node and size so that a new thread reuses a warm stack without a system call.
//
// Linux caps mappings per process (vm.max_map_count, 65530 by default). Where the kernel has
// guard regions (madvise MADV_GUARD_INSTALL, Linux 6.13) a guard page lives inside its slab's
// mapping and costs none: a slab of thousands of guarded stacks is one mapping. Elsewhere a guard
// page is an mprotect'ed page that costs two mappings (guard and stack); once such stacks would
// pass `max_guarded`, the pool hands out stacks of unguarded slabs, each with a canary at its low
// end that the scheduler checks whenever the thread is switched out: an overflow is then still
// reported, after the fact instead of at the faulting instruction. docs/architecture.md explains
// the trade.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace weft {

struct Stack {
  void* base = nullptr;   // lowest usable address
  std::size_t size = 0;   // usable bytes, a multiple of the page size
  void* guard = nullptr;  // the guard page below `base`, or nullptr for a canary stack
  int numa = -1;          // node the memory is bound to, -1 when unbound

  void* top() const { return static_cast<char*>(base) + size; }
  bool contains(const void* address) const;
  bool in_guard(const void* address) const;
  // For canary stacks: false when the words at the low end were overwritten. Checked at every
  // switch, so the guarded case is answered inline.
  bool canary_intact() const { return guard != nullptr || canary_words_intact(); }
  bool canary_words_intact() const;
};

// How the pool's stacks are guarded.
enum class GuardKind {
  kNone,           // stack.guard=false: canaries only
  kInsideMapping,  // MADV_GUARD_INSTALL: no mapping per stack
  kOwnMapping,     // mprotect: two mappings per stack, up to max_guarded
};

struct StackPoolOptions {
  bool guard_pages = true;
  // Guard pages inside their slab where the kernel has guard regions; false takes the mprotect
  // way of older kernels (tests run it here).
  bool guard_regions = true;
  std::size_t cached_per_class = 256;  // free stacks kept per (NUMA node, size)
  // 0: unlimited with guard regions, derived from vm.max_map_count without
  std::size_t max_guarded = 0;
  // Operating-system index of each NUMA node, for binding stack memory to its node; empty on a
  // topology that is not this machine's or has a single node (nothing to bind).
  std::vector<int> node_os_index;
};

class StackPool {
 public:
  explicit StackPool(StackPoolOptions options);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  // A stack of at least `size` bytes (rounded up to whole pages) on `numa` (-1: any).
  // Throws weft::Error when the memory cannot be reserved.
  Stack acquire(std::size_t size, int numa);
  void release(const Stack& stack);

  // Stacks currently handed out, and how many of them have a guard page.
  std::size_t in_use() const;
  std::size_t guarded_in_use() const;
  std::size_t max_guarded() const;
  GuardKind guard_kind() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
