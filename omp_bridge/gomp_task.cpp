// GOMP's task entry points: task, taskwait, taskyield, taskgroup.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gomp_abi.h"
#include "task_scheduling.h"
#include "weft/error.h"
#include "weft/this_thread.h"

namespace weft::omp {

namespace {

// GOMP_task's flags (GCC's gomp-constants.h).
constexpr unsigned kFinal = 1U << 1;
constexpr unsigned kDepend = 1U << 3;
constexpr unsigned kPriority = 1U << 4;
constexpr unsigned kDetach = 1U << 13;

// The kinds of an omp_depend_t (GCC's gomp-constants.h).
constexpr uintptr_t kDependIn = 1;
constexpr uintptr_t kDependMutexInoutset = 4;

// GCC's layouts of a task's dependences: {n, n_out, addresses...} with out/inout first, or {0, n,
// n_out, n_mutexinoutset, n_in, addresses..., depobjs...} in that order, where a depobj points at
// an omp_depend_t {address, kind} (mutexinoutset is ordered like inout here, which is stricter).
std::vector<Dependence> decode_dependences(void** depend) {
  auto count = [](void* word) {
    return static_cast<std::size_t>(reinterpret_cast<uintptr_t>(word));
  };
  std::size_t n = count(depend[0]);
  std::size_t writers = 0;
  std::size_t plain = n;
  void** addresses = nullptr;
  if (n != 0) {
    writers = count(depend[1]);
    addresses = depend + 2;
  } else {
    n = count(depend[1]);
    writers = count(depend[2]) + count(depend[3]);
    plain = writers + count(depend[4]);
    addresses = depend + 5;
  }
  std::vector<Dependence> result;
  result.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    void* address = addresses[i];
    bool writer = i < writers;
    if (i >= plain) {
      auto* object = static_cast<void**>(address);
      const auto kind = reinterpret_cast<uintptr_t>(object[1]);
      if (kind < kDependIn || kind > kDependMutexInoutset) {
        fatal("a task's depend(depobj: ...) names an omp_depend_t of kind " + std::to_string(kind) +
              ", which weft does not support (in, out, inout, " + "mutexinoutset)");
      }
      address = object[0];
      writer = kind != kDependIn;
    }
    result.push_back({address, writer});
  }
  return result;
}

void set_event(Task& task, void* detach, void* data) {
  task.detach.store(2, std::memory_order_relaxed);
  *static_cast<Task**>(detach) = &task;
  if (data != nullptr) *static_cast<Task**>(data) = &task;
}

// Whether a task runs at once in its creator: undeferred, included in a final task, or deferrable
// with nobody else to run it or too many of its creator's tasks waiting, unless it has dependences
// or a detach event (what it waits for may come from what its creator does next, fulfilling an
// event, say: such a task is queued even in a team of one).
bool runs_at_once(ThreadState& self, bool deferred, bool depends, bool detaches) {
  if (!deferred || self.task().final) return true;
  return !depends && !detaches && (self.team().size == 1 || tasks_throttled(self));
}

// A task run at once on its argument block as it is: neither counted nor queued, it needs only its
// place in the task tree (its children point at it) and its own ICVs (execute).
void run_at_once(ThreadState& self, void (*fn)(void*), void* data, bool final) {
  Task task;
  task.fn = fn;
  task.data = data;
  task.final = final || self.task().final;
  task.counted = false;
  adopt_child(self, task);
  execute(self, task);
}

}  // namespace

void spawn_task(ThreadState& self, void (*fn)(void*), void* data, void (*cpyfn)(void*, void*),
                long arg_size, long arg_align, bool deferred, bool final, void** depend,
                int priority, long* loop_bounds, void* detach) {
  const bool included = self.task().final;
  if (runs_at_once(self, deferred, depend != nullptr, detach != nullptr)) {
    Task task;
    task.fn = fn;
    task.final = final || included;
    task.priority = priority;
    // The argument block is copied when the construct has firstprivate data to construct.
    std::unique_ptr<char[]> copy;
    task.data = data;
    if (detach != nullptr) set_event(task, detach, data);
    if (cpyfn != nullptr || loop_bounds != nullptr) {
      const auto align = static_cast<std::size_t>(std::max(1L, arg_align));
      copy.reset(new char[static_cast<std::size_t>(arg_size) + align]);
      void* at = copy.get() + (align - reinterpret_cast<uintptr_t>(copy.get()) % align) % align;
      if (cpyfn != nullptr) {
        cpyfn(at, data);
      } else {
        std::memcpy(at, data, static_cast<std::size_t>(arg_size));
      }
      task.data = at;
    }
    if (loop_bounds != nullptr) std::memcpy(task.data, loop_bounds, 2 * sizeof(long));
    task.counted = depend != nullptr || detach != nullptr;
    adopt_child(self, task);
    if (depend != nullptr) {
      {
        const std::vector<Dependence> dependences = decode_dependences(depend);
        std::lock_guard<weft::Mutex> lock(self.team().tasks.lock());
        register_dependences(*task.parent, task, dependences);
      }
      wait_running_tasks(self, task.parent,
                         [&] { return task.blockers.load(std::memory_order_acquire) == 0; });
    }
    execute(self, task);
    return;
  }
  Task* task = allocate_task(&self.task_blocks, static_cast<std::size_t>(arg_size),
                             static_cast<std::size_t>(arg_align));
  task->fn = fn;
  task->final = final;
  task->priority = priority;
  if (detach != nullptr) set_event(*task, detach, data);
  if (cpyfn != nullptr) {
    cpyfn(task->data, data);
    task->copies_constructed = true;
  } else {
    std::memcpy(task->data, data, static_cast<std::size_t>(arg_size));
  }
  if (loop_bounds != nullptr) std::memcpy(task->data, loop_bounds, 2 * sizeof(long));
  adopt_child(self, *task);
  queue_task(self, *task,
             depend != nullptr ? decode_dependences(depend) : std::vector<Dependence>{});
}

int task_priority(unsigned flags, int priority) {
  if ((flags & kPriority) == 0 || priority < 0) return 0;
  return std::min(priority, global_icvs().max_task_priority);
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
               long arg_align, bool if_clause, unsigned flags, void** depend, int priority,
               void* detach) {
  ThreadState& state = self();
  // Most tasks of programs that create many: run at once with nothing to copy, wait for or
  // detach. Taken here, it spares spawn_task's general path and its twelve arguments (with the
  // inline self(): 257 -> 189 instructions a task in syncbench's TASK, where libgomp takes 108).
  if (cpyfn == nullptr && (flags & (kDepend | kDetach)) == 0 &&
      runs_at_once(state, if_clause, false, false)) {
    run_at_once(state, fn, data, (flags & kFinal) != 0);
    return;
  }
  spawn_task(state, fn, data, cpyfn, arg_size, arg_align, if_clause, (flags & kFinal) != 0,
             (flags & kDepend) != 0 ? depend : nullptr, task_priority(flags, priority), nullptr,
             (flags & kDetach) != 0 ? detach : nullptr);
}

void GOMP_taskwait() {
  ThreadState& state = self();
  Task& task = state.task();
  wait_running_tasks(state, &task,
                     [&] { return task.children.load(std::memory_order_acquire) == 0; });
}

// As OpenMP defines it: an empty undeferred task with those dependences, which its creator runs
// once the predecessors they name have finished. Waiting for every child instead could wait
// forever on a detached child whose event the caller fulfills after this wait.
void GOMP_taskwait_depend(void** depend) {
  wait_dependences(self(), decode_dependences(depend));
}

void GOMP_taskyield() {
  weft::this_thread::yield();
}

void GOMP_taskgroup_start() {
  Task& task = self().task();
  auto* group = new TaskGroup;
  group->outer = task.group;
  if (task.group != nullptr) group->reductions = task.group->reductions;
  task.group = group;
}

void GOMP_taskgroup_end() {
  ThreadState& state = self();
  Task& task = state.task();
  std::unique_ptr<TaskGroup> group(task.group);
  wait_running_tasks(state, &task,
                     [&] { return group->pending.load(std::memory_order_acquire) == 0; });
  task.group = group->outer;
}

}  // extern "C"
