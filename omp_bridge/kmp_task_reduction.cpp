// LLVM's task reductions: the compiler registers the items of a task_reduction clause (or a
// taskloop's reduction, or reduction(task, ...) on a parallel or worksharing construct) with their
// initializer, combiner and finalizer; the runtime gives each thread of the team its own
// initialized copy (__kmpc_task_reduction_get_th_data, what an in_reduction task uses) and, at
// the end of the taskgroup, combines every copy into the shared item. Unlike GCC's descriptors
// (task_reduction.cpp), here the runtime does the combining.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "gomp_abi.h"
#include "kmp_thread.h"
#include "task_scheduling.h"
#include "weft/error.h"

namespace weft::omp {

using namespace kmp;
using weft::fatal;

namespace {

constexpr std::size_t kLine = 64;  // each thread's copy starts on its own cache line

struct AlignedDelete {
  void operator()(std::byte* bytes) const { ::operator delete[](bytes, std::align_val_t(kLine)); }
};

struct Item {
  void* shared = nullptr;
  void* original = nullptr;
  std::size_t size = 0;
  std::size_t stride = 0;  // between two threads' copies
  void* init = nullptr;
  bool init_takes_original = true;  // the older form's initializer takes the copy only
  void (*fini)(void*) = nullptr;
  void (*comb)(void*, void*) = nullptr;
  std::unique_ptr<std::byte[], AlignedDelete> copies;

  void* copy(int thread) const { return copies.get() + static_cast<std::size_t>(thread) * stride; }
  bool holds(const void* address, int threads) const {
    const auto* at = static_cast<const std::byte*>(address);
    return address == shared || address == original ||
           (at >= copies.get() && at < copies.get() + static_cast<std::size_t>(threads) * stride);
  }
};

struct Registration {
  int threads = 1;
  std::vector<Item> items;
  // reduction(task, ...) on a parallel or worksharing construct: every thread's taskgroup holds
  // the registration, and the last of them to end combines.
  bool shared_by_team = false;
  std::atomic<int> ended{0};
};

// What a taskgroup holds: the registration, and the thread's own shared item for each of its
// items. Under reduction(task, ...) each thread's shared item is its own private copy of the
// construct's reduction, which the construct's ordinary reduction combines afterwards; the task
// contributions go into the copy of whichever thread ends last.
struct GroupView {
  Registration* registration;
  std::vector<void*> shared;
};

template <class Input>
GroupView* view_of(Registration* registration, int num, const Input* data) {
  auto* view = new GroupView{registration, {}};
  for (int i = 0; i < num; ++i) view->shared.push_back(data[i].reduce_shar);
  return view;
}

template <class Input>
Registration* make_registration(int threads, int num, const Input* data) {
  auto* registration = new Registration;
  registration->threads = threads;
  registration->items.resize(static_cast<std::size_t>(std::max(0, num)));
  for (int i = 0; i < num; ++i) {
    const Input& in = data[i];
    Item& item = registration->items[static_cast<std::size_t>(i)];
    item.shared = in.reduce_shar;
    if constexpr (std::is_same_v<Input, kmp_taskred_input_t>) {
      item.original = in.reduce_orig != nullptr ? in.reduce_orig : in.reduce_shar;
    } else {
      item.original = in.reduce_shar;
      item.init_takes_original = false;
    }
    item.size = in.reduce_size;
    item.stride = std::max<std::size_t>(kLine, (in.reduce_size + kLine - 1) / kLine * kLine);
    item.init = in.reduce_init;
    item.fini = reinterpret_cast<void (*)(void*)>(in.reduce_fini);
    item.comb = reinterpret_cast<void (*)(void*, void*)>(in.reduce_comb);
    const std::size_t bytes = item.stride * static_cast<std::size_t>(threads);
    item.copies.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(kLine))));
    for (int t = 0; t < threads; ++t) {
      void* copy = item.copy(t);
      if (item.init == nullptr) {
        std::memset(copy, 0, item.size);
      } else if (item.init_takes_original) {
        reinterpret_cast<void (*)(void*, void*)>(item.init)(copy, item.original);
      } else {
        reinterpret_cast<void (*)(void*)>(item.init)(copy);
      }
    }
  }
  return registration;
}

void combine(Registration* registration, const std::vector<void*>& shared) {
  for (std::size_t i = 0; i < registration->items.size(); ++i) {
    Item& item = registration->items[i];
    for (int t = 0; t < registration->threads; ++t) {
      item.comb(shared[i], item.copy(t));
      if (item.fini != nullptr) item.fini(item.copy(t));
    }
  }
  delete registration;
}

// Registers in the caller's innermost taskgroup, which must exist.
template <class Input>
void* init(int num, const Input* data, const char* call) {
  ThreadState& state = self();
  TaskGroup* group = state.task().group;
  if (group == nullptr) fatal(std::string(call) + ": no enclosing taskgroup");
  if (group->kmp_reductions != nullptr) {
    fatal(std::string(call) + ": the taskgroup already has task reductions");
  }
  group->kmp_reductions = view_of(make_registration(state.team().size, num, data), num, data);
  return group;
}

// reduction(task, ...): the construct's first thread makes the registration, every thread opens
// a taskgroup holding it.
template <class Input>
void* modifier_init(int num, const Input* data) {
  ThreadState& state = self();
  Team& team = state.team();
  const std::uint64_t index = state.context.constructs++;
  WorkShare& ws = team.slots[index % kWorkShareSlots];
  if (ws.enter(index, team.signal)) {
    Registration* registration = make_registration(team.size, num, data);
    registration->shared_by_team = true;
    ws.copy = registration;
    ws.published(team.signal);
  }
  auto* registration = static_cast<Registration*>(ws.copy);
  ws.leave(team.size, team.signal);
  GOMP_taskgroup_start();
  state.task().group->kmp_reductions = view_of(registration, num, data);
  return state.task().group;
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;
using namespace weft::omp::kmp;

extern "C" {

void* __kmpc_taskred_init(kmp_int32 /*gtid*/, kmp_int32 num, void* data) {
  return init(num, static_cast<const kmp_taskred_input_t*>(data), "__kmpc_taskred_init");
}
void* __kmpc_task_reduction_init(kmp_int32 /*gtid*/, kmp_int32 num, void* data) {
  return init(num, static_cast<const kmp_task_red_input_t*>(data), "__kmpc_task_reduction_init");
}
void* __kmpc_taskred_modifier_init(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 /*is_ws*/,
                                   kmp_int32 num, void* data) {
  return modifier_init(num, static_cast<const kmp_taskred_input_t*>(data));
}
void* __kmpc_task_reduction_modifier_init(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 /*is_ws*/,
                                          kmp_int32 num, void* data) {
  return modifier_init(num, static_cast<const kmp_task_red_input_t*>(data));
}
void __kmpc_task_reduction_modifier_fini(ident_t* loc, kmp_int32 gtid, kmp_int32 /*is_ws*/) {
  __kmpc_end_taskgroup(loc, gtid);
}

// The calling thread's copy of `item` (a shared item or any thread's copy of one), looked up in
// `group` (a handle an init returned) or else the current task's taskgroups, innermost first.
void* __kmpc_task_reduction_get_th_data(kmp_int32 /*gtid*/, void* group, void* item) {
  ThreadState& state = self();
  auto* at = group != nullptr ? static_cast<TaskGroup*>(group) : state.task().group;
  for (; at != nullptr; at = at->outer) {
    const auto* view = static_cast<const GroupView*>(at->kmp_reductions);
    if (view == nullptr) continue;
    const Registration& registration = *view->registration;
    for (std::size_t i = 0; i < registration.items.size(); ++i) {
      const Item& candidate = registration.items[i];
      if (item == view->shared[i] || candidate.holds(item, registration.threads)) {
        return candidate.copy(state.num());
      }
    }
  }
  fatal(
      "__kmpc_task_reduction_get_th_data: the item is in no task reduction of an enclosing "
      "taskgroup");
}

// The end of a taskgroup: once its tasks finished, its task reductions are combined (for a
// team's shared registration, by the last thread to end its group).
void __kmpc_end_taskgroup(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  ThreadState& state = self();
  Task& task = state.task();
  std::unique_ptr<TaskGroup> group(task.group);
  if (!group) fatal("__kmpc_end_taskgroup without __kmpc_taskgroup");
  wait_running_tasks(state, &task,
                     [&] { return group->pending.load(std::memory_order_acquire) == 0; });
  task.group = group->outer;
  if (auto* view = static_cast<GroupView*>(group->kmp_reductions)) {
    std::unique_ptr<GroupView> owned(view);
    Registration* registration = view->registration;
    // acq_rel: the last thread sees every other thread's tasks' updates of their copies.
    if (!registration->shared_by_team ||
        registration->ended.fetch_add(1, std::memory_order_acq_rel) + 1 == registration->threads) {
      combine(registration, view->shared);
    }
  }
}

}  // extern "C"
