#include "task_scheduling.h"

#include <algorithm>
#include <mutex>

#include "weft/error.h"
#include "weft/trace.h"

namespace weft::omp {

namespace {

void add_edge(Task* predecessor, Task& task) {
  if (predecessor == nullptr || predecessor == &task || predecessor->finished) return;
  predecessor->deps->successors.push_back(&task);
  task.blockers.fetch_add(1, std::memory_order_relaxed);
}

// Finishes `task`. Its teammates are woken only when it changes what one of them may wait for:
// a successor made ready, the last child of its parent, the last task of a taskgroup or of the
// team. Waking on every task, as the first version did, woke every sleeping thread of the team
// per task (a Signal wakes all its sleepers), only for most of them to find nothing changed.
void finish(Team& team, Task& task, TaskBlockCache* cache) {
  Task* parent = task.parent;
  bool wake = false;
  // Only a task with dependences is listed in its parent's map, so only it can have successors
  // or be looked at by a sibling being registered: the others finish without the team's lock.
  if (task.has_dependences()) {
    std::lock_guard<weft::Mutex> lock(team.tasks.lock());
    task.finished = true;
    for (Task* successor : task.deps->successors) {
      // release: an undeferred successor waits for 0 without the lock, then runs.
      if (successor->blockers.fetch_sub(1, std::memory_order_release) == 1) {
        wake = true;
        if (!successor->creator_waits()) team.tasks.push(successor);
      }
    }
    task.deps->successors.clear();
    auto& siblings = parent->deps->children;
    for (void* address : task.deps->addresses) {
      auto entry = siblings.find(address);
      if (entry == siblings.end()) continue;
      if (entry->second.last_writer == &task) entry->second.last_writer = nullptr;
      std::erase(entry->second.readers, &task);
      if (entry->second.last_writer == nullptr && entry->second.readers.empty()) {
        siblings.erase(entry);
      }
    }
  }
  // relaxed: the master waits for 0 only after the team's pending count below reaches 0.
  team.touching.fetch_add(1, std::memory_order_relaxed);
  // release: a waiter that sees a count drop sees what the task wrote.
  if (task.counted_in != nullptr &&
      task.counted_in->pending.fetch_sub(1, std::memory_order_release) == 1) {
    wake = true;
  }
  if (parent->children.fetch_sub(1, std::memory_order_release) == 1) wake = true;
  // Before the team's count: its creator's state lives at least as long as the team's tasks.
  if (task.in_flight_of != nullptr) task.in_flight_of->fetch_sub(1, std::memory_order_relaxed);
  if (team.tasks.finished()) wake = true;
  // Before the wake-up: an undeferred parent waits for its references to drop to its own, which
  // happens when this task is freed (now, unless children of its own are left).
  release_task(&task, cache);
  if (wake) team.signal.notify();
  // release: the last touch of the team; the region may end once no task is pending.
  team.touching.fetch_sub(1, std::memory_order_release);
}

// execute()'s wait for the children of a task on the stack, out of line: inlined, its loop made
// execute save every register it may use, for every task (callgrind: 6 instructions a task).
[[gnu::noinline]] void wait_for_children(ThreadState& self, Task& task) {
  wait_running_tasks(self, &task, [&] { return task.refs.load(std::memory_order_acquire) == 1; });
}

}  // namespace

bool run_one_task(ThreadState& self, const Task* ancestor) {
  TaskQueue& tasks = self.team().tasks;
  if (!tasks.maybe_ready()) return false;
  Task* task = nullptr;
  {
    std::lock_guard<weft::Mutex> lock(tasks.lock());
    task = tasks.take(ancestor);
  }
  if (task == nullptr) return false;
  execute(self, *task);
  return true;
}

void execute(ThreadState& self, Task& task) {
  Task* const previous = self.context.task;
  self.context.task = &task;
  // The task's changes to the ICVs (omp_set_num_threads...) are its own: OpenMP keeps them per
  // task, so the thread gets its values back after the task.
  const Icvs icv = self.icv();
  // A task of a cancelled taskgroup that has not started is discarded.
  if (task.copies_constructed || !taskgroup_cancelled(task.counted_in)) {
    const trace::Span span(trace::Category::omp, "task");
    task.fn(task.data);
  }
  // A task on the stack (undeferred) must outlive its children, which point at it.
  if (task.allocation_align == 0 && task.refs.load(std::memory_order_acquire) != 1) {
    wait_for_children(self, task);
  }
  self.context.task = previous;
  self.icv() = icv;
  complete(self, task);
}

void complete(ThreadState& self, Task& task) {
  if (!task.counted) return;
  if (task.detach.load(std::memory_order_relaxed) != 0) {
    if (task.creator_waits()) {
      // Undeferred: its creator waits here for the event, running tasks meanwhile.
      wait_running_tasks(self, nullptr,
                         [&] { return task.detach.load(std::memory_order_acquire) == 1; });
    } else if (task.detach.fetch_sub(1, std::memory_order_acq_rel) != 1) {
      // acq_rel: whichever of this and omp_fulfill_event comes second finishes the task and
      // must see what the other side wrote.
      return;
    }
  }
  finish(self.team(), task, &self.task_blocks);
}

void fulfill(Task& task) {
  Team& team = *task.team;
  const int parts = task.detach.load(std::memory_order_relaxed);
  if (parts != 2 && !(parts == 1 && !task.creator_waits())) {
    fatal("omp_fulfill_event: the event is not that of a detached task, or was already fulfilled");
  }
  if (task.creator_waits()) {
    // relaxed: the creator, which waits below, sees it through the release that follows; the
    // team cannot end before the creator goes on, and its master then waits for this count.
    team.touching.fetch_add(1, std::memory_order_relaxed);
    // release: what the fulfilling thread wrote, for the creator.
    task.detach.store(1, std::memory_order_release);
    team.signal.notify();
    team.touching.fetch_sub(1, std::memory_order_release);
    return;
  }
  // acq_rel: as in execute().
  if (task.detach.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    finish(team, task, calling_thread_block_cache());
  }
}

void* all_memory() {
  static char key;
  return &key;
}

void register_dependences(Task& parent, Task& task, const std::vector<Dependence>& dependences) {
  for (const Dependence& dependence : dependences) {
    if (dependence.address != all_memory()) continue;
    // After every sibling still listed, which need not be listed any more: every later sibling
    // with dependences is ordered after this task, through the all_memory entry.
    auto& siblings = parent.dependences().children;
    for (auto& [address, entry] : siblings) {
      add_edge(entry.last_writer, task);
      for (Task* reader : entry.readers) add_edge(reader, task);
    }
    siblings.clear();
    siblings[all_memory()].last_writer = &task;
    task.dependences().addresses.push_back(all_memory());
    return;
  }
  auto& siblings = parent.dependences().children;
  std::vector<void*>& addresses = task.dependences().addresses;
  if (auto all = siblings.find(all_memory()); all != siblings.end()) {
    add_edge(all->second.last_writer, task);
  }
  for (const Dependence& dependence : dependences) {
    DependenceEntry& entry = siblings[dependence.address];
    add_edge(entry.last_writer, task);
    if (dependence.writer) {
      for (Task* reader : entry.readers) add_edge(reader, task);
      entry.readers.clear();
      entry.last_writer = &task;
    } else if (entry.last_writer != &task) {
      entry.readers.push_back(&task);
    }
    addresses.push_back(dependence.address);
  }
}

void hold_parent(Task& task) {
  if (task.parent != nullptr && !task.parent->implicit) {
    task.parent->refs.fetch_add(1, std::memory_order_relaxed);
    task.holds_parent = true;
  }
}

void count_child(ThreadState& self, Task& parent, Task& task) {
  if (!parent.implicit) {
    parent.refs.fetch_add(1, std::memory_order_relaxed);
    task.holds_parent = true;
  }
  parent.children.fetch_add(1, std::memory_order_relaxed);
  if (parent.group != nullptr) parent.group->pending.fetch_add(1, std::memory_order_relaxed);
  // relaxed: a count for the throttle only, which orders nothing.
  self.tasks_in_flight.fetch_add(1, std::memory_order_relaxed);
  task.in_flight_of = &self.tasks_in_flight;
  self.team().tasks.created();
}

void queue_task(ThreadState& self, Task& task, const std::vector<Dependence>& dependences) {
  Team& team = self.team();
  {
    std::lock_guard<weft::Mutex> lock(team.tasks.lock());
    if (!dependences.empty()) register_dependences(*task.parent, task, dependences);
    if (task.blockers.load(std::memory_order_relaxed) == 0) team.tasks.push(&task);
  }
  team.signal.notify();
}

namespace {
// The empty body of the task that stands for a wait on dependences.
void no_work(void* /*data*/) {}
}  // namespace

void wait_dependences(ThreadState& self, const std::vector<Dependence>& dependences) {
  Task task;
  task.fn = no_work;
  adopt_child(self, task);
  {
    std::lock_guard<weft::Mutex> lock(self.team().tasks.lock());
    register_dependences(*task.parent, task, dependences);
  }
  wait_running_tasks(self, task.parent,
                     [&] { return task.blockers.load(std::memory_order_acquire) == 0; });
  execute(self, task);
}

}  // namespace weft::omp
