// Running tasks: taking them from the team's queue, executing them on the calling thread, and
// waiting for a condition while running the tasks that may run meanwhile.
#pragma once

#include <vector>

#include "task.h"
#include "team.h"
#include "thread_state.h"

namespace weft::omp {

// Runs one queued task of the caller's team, descending from `ancestor` when it is not null.
// False when there was none.
bool run_one_task(ThreadState& self, const Task* ancestor);

// Runs `task` on the calling thread as its current task, then finishes it: its successors become
// ready, its parent, taskgroup and team count it out.
void execute(ThreadState& self, Task& task);

// With many of its tasks already waiting, the thread has given its team work enough: running a
// new one at once costs a call instead of an allocation and a trip through the queue. The bound is
// per creating thread, as libomp's (a full deque of the thread's runs the task at once), not per
// team as libgomp's: a thread's waiting tasks then fit its cache of task blocks, where with a
// team's bound (64 per thread of the team) the first thread of 8 queued 512 and its blocks went
// through the heap (callgrind: 180 of the 260 instructions a task cost more at 8 threads than at
// 2, in syncbench's TASK).
inline bool tasks_throttled(const ThreadState& self) {
  return self.tasks_in_flight.load(std::memory_order_relaxed) >= TaskBlockCache::kDepth;
}

// Whether a deferrable task without dependences or detach event runs at once in its creator:
// included in a final task, with nobody else to run it, or throttled.
inline bool deferrable_runs_at_once(const ThreadState& self) {
  return self.task().final || self.team().size == 1 || tasks_throttled(self);
}

// A task's dependence on an address: writers are out, inout, mutexinoutset and inoutset (the last
// two ordered like inout, which is stricter than OpenMP asks), readers are in.
struct Dependence {
  void* address;
  bool writer;
};

// The address that stands for omp_all_memory (OpenMP 5.1 2.19.11): a dependence on it is an out
// dependence on every location, ordered after every earlier sibling with dependences and before
// every later one.
void* all_memory();

// adopt_child's rarer parts, out of line. hold_parent: `task`, allocated and not counted, takes
// its reference on its parent (unless implicit). count_child: `task` counts in `parent`, its
// taskgroup, its creator's tasks in flight and the team.
void hold_parent(Task& task);
void count_child(ThreadState& self, Task& parent, Task& task);

// Makes `task` a child of the caller's current task, counted in its parent, taskgroup and team
// unless task.counted is false. Inline: a task run at once without being counted (most of them)
// needs only its four links (callgrind: the call took 5 instructions of its 15).
inline void adopt_child(ThreadState& self, Task& task) {
  Task& parent = self.task();
  task.parent = &parent;
  task.counted_in = parent.group;
  task.group = parent.group;
  task.team = &self.team();
  // A parent run at once without being counted (LLVM's layer allocates it) takes its reference
  // on its own parent at its first child, whose walks up the chain may outlive it.
  if (parent.allocation_align != 0 && !parent.holds_parent) [[unlikely]] {
    hold_parent(parent);
  }
  if (task.counted) count_child(self, parent, task);
}
// Orders `task` after its earlier siblings as `dependences` ask; under the team's task lock.
void register_dependences(Task& parent, Task& task, const std::vector<Dependence>& dependences);
// Queues an adopted deferred task once its dependences are met (at once if it has none).
void queue_task(ThreadState& self, Task& task, const std::vector<Dependence>& dependences);
// Returns once the earlier siblings `dependences` name have finished, running tasks meanwhile:
// an empty undeferred task with those dependences, as OpenMP defines taskwait depend.
void wait_dependences(ThreadState& self, const std::vector<Dependence>& dependences);

// What execute() does after the task's body returned and the caller's current task is restored:
// a counted task finishes (at once, or when its detach event comes); an uncounted one is left to
// its creator.
void complete(ThreadState& self, Task& task);

// omp_fulfill_event: the detach event of `task` happened; the task finishes if its body returned.
void fulfill(Task& task);

// Returns once pred() holds, running tasks descending from `ancestor` (any task when null) in the
// meantime.
template <class Pred>
void wait_running_tasks(ThreadState& self, const Task* ancestor, Pred pred) {
  TaskQueue& tasks = self.team().tasks;
  while (!pred()) {
    const std::uint64_t seen = tasks.pushes();
    if (run_one_task(self, ancestor)) continue;
    self.team().signal.wait([&] { return pred() || tasks.pushes() != seen; });
  }
}

}  // namespace weft::omp

namespace weft::omp {

// GOMP_task and GOMP_taskloop's common part: a task running fn on a copy of data (made by cpyfn
// when given), deferred unless `deferred` is false, the caller's task is final or its team has one
// thread. For taskloop, `loop_bounds` (two longs) overwrite the copy's first two words. With
// `detach` (the detach clause's event variable), the task's event handle is stored there and in
// the first word of `data` (where GCC keeps the task's copy of the event) before the copy.
void spawn_task(ThreadState& self, void (*fn)(void*), void* data, void (*cpyfn)(void*, void*),
                long arg_size, long arg_align, bool deferred, bool final, void** depend,
                int priority, long* loop_bounds, void* detach = nullptr);
// The priority a task created with GOMP flags `flags` runs at.
int task_priority(unsigned flags, int priority);

}  // namespace weft::omp
