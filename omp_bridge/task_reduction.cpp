#include "task_reduction.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gomp_abi.h"
#include "task.h"
#include "team.h"
#include "thread_state.h"
#include "weft/error.h"
#include "work_share.h"

namespace weft::omp {

namespace {

// Word indices of GCC's descriptor (task_reduction.h).
enum : std::size_t {
  kCount = 0,
  kCopyBytes = 1,
  kCopies = 2,  // alignment on input
  kNext = 4,
  kRegistration = 5,
  kEnd = 6,
  kEntries = 7,
};
// Words of a variable's entry: its address, its offset in a copy, its descriptor.
enum : std::size_t { kAddress = 0, kOffset = 1, kDescriptor = 2, kEntryWords = 3 };

std::uintptr_t* next(const std::uintptr_t* d) {
  return reinterpret_cast<std::uintptr_t*>(d[kNext]);
}
std::uintptr_t* entry(std::uintptr_t* d, std::size_t i) {
  return d + kEntries + i * kEntryWords;
}

// The descriptor of the last registration made visible to the calling task.
std::uintptr_t* visible_reductions(ThreadState& self) {
  const TaskGroup* group = self.task().group;
  return group != nullptr ? group->reductions : nullptr;
}

[[noreturn]] void no_match(const void* address) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", address);
  fatal(std::string("GOMP_task_reduction_remap: ") + text +
        " is the list item of no enclosing task_reduction or reduction(task, ...) clause");
}

}  // namespace

void register_reductions(std::uintptr_t* data, std::uintptr_t* shadowed,
                         const std::uintptr_t* first, int threads) {
  for (std::uintptr_t* d = data;; d = next(d)) {
    if (first != nullptr) {
      d[kCopies] = first[kCopies];
      d[kEnd] = first[kEnd];
      first = next(first);
    } else {
      const std::size_t bytes = d[kCopyBytes] * static_cast<std::size_t>(threads);
      const std::size_t align = std::max<std::size_t>(d[kCopies], sizeof(void*));
      void* copies = nullptr;
      // posix_memalign: the size need not be a multiple of the alignment, and free() needs no
      // size or alignment back (the descriptor's alignment word is overwritten).
      if (::posix_memalign(&copies, align, bytes > 0 ? bytes : 1) != 0) {
        fatal("task reductions: cannot allocate " + std::to_string(bytes) + " bytes");
      }
      std::memset(copies, 0, bytes);
      d[kCopies] = reinterpret_cast<std::uintptr_t>(copies);
      d[kEnd] = d[kCopies] + bytes;
    }
    d[kRegistration] = d == data ? 1 : 0;
    for (std::size_t i = 0; i < d[kCount]; ++i) {
      entry(d, i)[kDescriptor] = reinterpret_cast<std::uintptr_t>(d);
    }
    if (d[kNext] == 0) {
      d[kNext] = reinterpret_cast<std::uintptr_t>(shadowed);
      return;
    }
  }
}

void unregister_reductions(std::uintptr_t* data) {
  std::uintptr_t* d = data;
  do {
    std::free(reinterpret_cast<void*>(d[kCopies]));
    d = next(d);
  } while (d != nullptr && d[kRegistration] == 0);
}

void register_workshare_reductions(ThreadState& self, WorkShare& ws, bool initializer,
                                   std::uintptr_t* data) {
  Task& task = self.task();
  auto* group = new TaskGroup;
  group->outer = task.group;
  group->workshare = true;
  group->reductions = task.group != nullptr ? task.group->reductions : nullptr;
  task.group = group;
  register_reductions(data, group->reductions, initializer ? nullptr : ws.task_reductions,
                      self.team().size);
  if (initializer) ws.task_reductions = data;
  group->reductions = data;
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void GOMP_taskgroup_reduction_register(std::uintptr_t* data) {
  ThreadState& state = self();
  TaskGroup* group = state.task().group;
  if (group == nullptr) weft::fatal("GOMP_taskgroup_reduction_register: no taskgroup is open");
  register_reductions(data, group->reductions, nullptr, state.team().size);
  group->reductions = data;
}

void GOMP_taskgroup_reduction_unregister(std::uintptr_t* data) {
  unregister_reductions(data);
}

// For i < cnt, ptrs[i] is an original list item or the address of some thread's copy of one; it
// becomes the address of the calling thread's copy. For i < cntorig, ptrs[cnt + i] also gets the
// original item's address.
void GOMP_task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs) {
  ThreadState& state = self();
  const auto id = static_cast<std::uintptr_t>(state.num());
  std::uintptr_t* const visible = visible_reductions(state);
  for (std::size_t i = 0; i < cnt; ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(ptrs[i]);
    std::uintptr_t* found = nullptr;
    for (std::uintptr_t* d = visible; d != nullptr && found == nullptr; d = next(d)) {
      for (std::size_t v = 0; v < d[kCount]; ++v) {
        if (entry(d, v)[kAddress] == address) {
          found = entry(d, v);
          break;
        }
      }
    }
    if (found == nullptr) {
      // Some thread's copy: the same offset in the caller's.
      std::uintptr_t* d = visible;
      while (d != nullptr && !(address >= d[kCopies] && address < d[kEnd])) d = next(d);
      if (d == nullptr) no_match(ptrs[i]);
      const std::uintptr_t offset = (address - d[kCopies]) % d[kCopyBytes];
      for (std::size_t v = 0; v < d[kCount] && found == nullptr; ++v) {
        if (entry(d, v)[kOffset] == offset) found = entry(d, v);
      }
      if (found == nullptr) no_match(ptrs[i]);
    }
    const auto* d = reinterpret_cast<const std::uintptr_t*>(found[kDescriptor]);
    ptrs[i] = reinterpret_cast<void*>(d[kCopies] + id * d[kCopyBytes] + found[kOffset]);
    if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void*>(found[kAddress]);
  }
}

// The end of a worksharing construct with task reductions, after GCC's code combined the
// copies: the thread's taskgroup of the construct ends, thread 0 frees the copies, and the team
// meets at a barrier unless the region was cancelled.
void GOMP_workshare_task_reduction_unregister(bool cancelled) {
  ThreadState& state = self();
  std::uintptr_t* data = state.task().group->reductions;
  GOMP_taskgroup_end();
  if (state.num() == 0) unregister_reductions(data);
  if (!cancelled) state.team().barrier.wait(state);
}

}  // extern "C"
