// Explicit and implicit tasks. A task is queued in its team's TaskQueue once its dependences are
// met, run by whichever thread of the team takes it at a scheduling point (barrier, taskwait,
// taskgroup end), and freed when it has finished and its children have been freed.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "weft/sync.h"

namespace weft::omp {

struct Task;
struct Team;

struct TaskGroup {
  TaskGroup* outer = nullptr;
  std::atomic<int> pending{0};         // tasks created in the group (at any depth) not finished yet
  std::atomic<bool> cancelled{false};  // its tasks not started yet will not run
  // Opened by a worksharing construct's reduction(task, ...), not by the program: a `cancel
  // taskgroup` in it cancels the taskgroup around it, as libgomp does.
  bool workshare = false;
  // Task reductions visible in the group: its own registration, chained in front of those of
  // the enclosing groups (task_reduction.h); null for none.
  std::uintptr_t* reductions = nullptr;
  // LLVM's task reductions registered in the group (kmp_task_reduction.cpp), which combines and
  // frees them at the group's end; null for none.
  void* kmp_reductions = nullptr;
};

// Whether `group` or a taskgroup enclosing it was cancelled: OpenMP's taskgroup set holds the
// tasks of the taskgroups nested in it as well.
inline bool taskgroup_cancelled(const TaskGroup* group) {
  for (; group != nullptr; group = group->outer) {
    // relaxed: cancellation is a hint that spares work; the taskgroup end still waits.
    if (group->cancelled.load(std::memory_order_relaxed)) return true;
  }
  return false;
}

// Dependences of a task's children on one address.
struct DependenceEntry {
  Task* last_writer = nullptr;  // last out/inout sibling not finished
  std::vector<Task*> readers;   // in siblings since it, not finished
};

// What a task with dependences, or one whose children have some, keeps; allocated at its first
// need (under the team's TaskQueue lock), so that the many tasks without dependences neither build
// nor destroy it.
struct TaskDependences {
  std::vector<Task*> successors;
  // The addresses the task is listed under in its parent's `children`.
  std::vector<void*> addresses;
  std::unordered_map<void*, DependenceEntry> children;  // of the task's children
};

struct Task {
  void (*fn)(void*) = nullptr;
  void* data = nullptr;
  Task* parent = nullptr;
  TaskGroup* group = nullptr;       // innermost taskgroup the task's new children count in
  TaskGroup* counted_in = nullptr;  // the taskgroup this task counts in
  Team* team = nullptr;  // its creator's: whoever fulfills its detach event may be elsewhere
  int priority = 0;
  bool final = false;
  bool implicit = false;
  // Its firstprivate objects were copy-constructed when it was created (GCC's cpyfn): their
  // destructors are in its body, so it runs even in a cancelled taskgroup (its cancellation points
  // then end it), as libgomp runs it.
  bool copies_constructed = false;
  // Counted in its parent's children, its taskgroup and the team's pending tasks. An undeferred
  // task without dependences or detach is not: its creator runs it to completion before anyone
  // could wait for it, and not counting spares it the atomics on lines the whole team shares.
  bool counted = true;
  // It holds a reference on its parent (not implicit), dropped when the task is freed: a task's
  // chain of parents stays valid as long as the task lives (TaskQueue::take walks it). A counted
  // task takes it when adopted, an uncounted allocated one at its first child (a task without
  // children is walked through by nobody); a task on a stack outlives its children and needs none.
  bool holds_parent = false;
  std::int8_t block_class = -1;      // its block's TaskBlockCache class; -1: not cached
  std::size_t allocation_align = 0;  // of allocate_task's block; 0 for a task on a stack
  // Run at once by its creator, which waits for its detach event (a task on a stack always is;
  // LLVM's ABI allocates undeferred tasks too).
  bool undeferred = false;

  std::atomic<int> children{0};  // children not finished
  // Own execution plus one per child not freed; the last reference frees an explicit task.
  std::atomic<int> refs{1};

  // The detach clause: 2 from creation, until both the body returned and omp_fulfill_event
  // was called, each taking one away; the task finishes when the second comes. 0 without detach.
  std::atomic<int> detach{0};

  // Its creator's count of counted tasks not finished (ThreadState::tasks_in_flight); null for an
  // uncounted task.
  std::atomic<int>* in_flight_of = nullptr;

  // Predecessors not finished; changed under the team's TaskQueue lock.
  std::atomic<int> blockers{0};
  // Under the team's TaskQueue lock. Set for a task with dependences only: no sibling can
  // find another in its parent's map.
  bool finished = false;
  std::unique_ptr<TaskDependences> deps;  // under the team's TaskQueue lock

  // This task's dependence state, allocated at the first call; under the TaskQueue lock.
  TaskDependences& dependences() {
    if (deps == nullptr) deps = std::make_unique<TaskDependences>();
    return *deps;
  }
  bool has_dependences() const { return deps != nullptr && !deps->addresses.empty(); }

  bool creator_waits() const { return allocation_align == 0 || undeferred; }
  // True when `ancestor` is this task or one of its ancestors.
  bool descends_from(const Task* ancestor) const;
};

// Blocks of freed tasks that a thread keeps for its next ones, by size class (libomp keeps a free
// list per thread alike): the heap's aligned allocation and free cost more than a small task's
// own work. A block freed by another thread than its creator's joins the freeing thread's cache.
// A thread that frees more blocks than it creates (it runs its teammates' tasks) hands a full
// class's surplus, a batch at a time, to a depot shared by the process, where a thread whose class
// ran out takes a batch back (Bonwick's magazines): one lock per batch, where the heap took its
// arena's lock per block, the arena of the creator's kernel thread at that, whose lock the two
// cores then fought over (syncbench's TASK at 8 threads on 2 cores: about 50 000 futex calls per
// 491 520 tasks, 8-13 % of the samples in the futex wake of glibc's allocator lock; with the
// depot, 25-29 calls; docs/omp_bridge.md).
class TaskBlockCache {
 public:
  static constexpr std::size_t kAlign = 128;  // of every cached block: LLVM's tasks ask for it
  static constexpr int kDepth = 64;           // blocks per class: a batch of tasks a thread runs
  static constexpr int kBatch = kDepth / 2;   // blocks a thread hands to the depot, or takes
  static constexpr int kClasses = 4;          // 256 to 2048 bytes
  TaskBlockCache() = default;
  TaskBlockCache(const TaskBlockCache&) = delete;
  TaskBlockCache& operator=(const TaskBlockCache&) = delete;
  ~TaskBlockCache();

  // The class of a block of `bytes`, -1 past the largest.
  static int size_class(std::size_t bytes) {
    for (int c = 0; c < kClasses; ++c) {
      if (bytes <= block_size(c)) return c;
    }
    return -1;
  }
  static std::size_t block_size(int size_class) { return kSmallest << size_class; }

  // A kept block of the class, one of a batch from the depot, or null.
  void* take(int size_class) {
    void* block = take_kept(size_class);
    if (block == nullptr) [[unlikely]] {
      return take_from_depot(size_class);
    }
    return block;
  }
  // A kept block of the class, or null, without going to the depot: a path that then makes no
  // call.
  void* take_kept(int size_class) {
    const auto c = static_cast<std::size_t>(size_class);
    FreeBlock* block = heads_[c];
    if (block == nullptr) return nullptr;
    heads_[c] = block->next;
    --counts_[c];
    return block;
  }
  // Keeps `block`; a full class first hands a batch to the depot (or, the depot full, the heap).
  void keep(void* block, int size_class) {
    const auto c = static_cast<std::size_t>(size_class);
    if (counts_[c] == kDepth) [[unlikely]] {
      keep_after_spilling(block, size_class);
      return;
    }
    // Only the list's link: a batch's link is written when it leaves for the depot.
    auto* kept = new (block) FreeBlock;
    kept->next = heads_[c];
    heads_[c] = kept;
    ++counts_[c];
  }

  // A free block's links: `next` in a cache's list or a batch, `next_batch` between the batches
  // of the depot.
  struct FreeBlock {
    FreeBlock* next;
    FreeBlock* next_batch;
  };

 private:
  static constexpr std::size_t kSmallest = 256;
  // Out of line, once per kBatch tasks at most, and called last: the paths of take() and keep()
  // then save no registers around them (callgrind: 4 instructions a task otherwise).
  void* take_from_depot(int size_class);
  void keep_after_spilling(void* block, int size_class);
  std::array<FreeBlock*, kClasses> heads_{};
  std::array<int, kClasses> counts_{};
};

// The calling thread's cache of task blocks; null outside OpenMP threads (a thread that is not
// one may still fulfill an event, which frees its task). Callers that hold the thread's state pass
// its cache to the two functions below instead: the look-up costs as much as the cache's work.
TaskBlockCache* calling_thread_block_cache();

// Where a deferred task's argument block starts in its allocation, the block after the Task
// (alignments are powers of two).
constexpr std::size_t task_data_offset(std::size_t align) {
  const std::size_t a = std::max({align, alignof(Task), alignof(std::max_align_t)});
  return (sizeof(Task) + a - 1) & ~(a - 1);
}
// The task at the start of `memory`, a block of the cache's `size_class`, its argument block at
// `offset`.
inline Task* make_cached_task(void* memory, std::size_t offset, int size_class) {
  Task* task = new (memory) Task;
  task->data = static_cast<char*>(memory) + offset;
  task->allocation_align = TaskBlockCache::kAlign;
  task->block_class = static_cast<std::int8_t>(size_class);
  return task;
}
// allocate_task's block from the heap, when neither the cache nor the depot has one of its class.
Task* allocate_task_from_heap(std::size_t size, std::size_t align);
// Allocates a deferred task with `size` bytes of argument data aligned to `align`, from `cache`
// (the calling thread's, or null) when it has a block of the size. Inline, with the rest out of
// line: with a constant `align` (LLVM's layer) the class's test and the cache's take are a few
// instructions, where the call and the general computation of the offset cost as much as the
// task's own work (callgrind, taskcost inline: 65 instructions a task in the function).
inline Task* allocate_task(TaskBlockCache* cache, std::size_t size, std::size_t align) {
  const std::size_t offset = task_data_offset(align);
  const int size_class =
      align <= TaskBlockCache::kAlign ? TaskBlockCache::size_class(offset + size) : -1;
  void* memory = size_class >= 0 && cache != nullptr ? cache->take(size_class) : nullptr;
  if (memory == nullptr) [[unlikely]] {
    return allocate_task_from_heap(size, align);
  }
  return make_cached_task(memory, offset, size_class);
}
// The task whose argument block, allocated by allocate_task with `align`, is at `data`. Inline:
// LLVM's layer finds the task of a kmp_task_t at each of its calls, a constant subtraction.
inline Task* allocated_task_of(void* data, std::size_t align) {
  return reinterpret_cast<Task*>(static_cast<char*>(data) - task_data_offset(align));
}
// Drops a reference; the last frees a task from allocate_task (into `cache`, the calling
// thread's or null) and drops the reference it held on its parent.
void release_task(Task* task, TaskBlockCache* cache);
// release_task for an allocated task its creator ran at once without counting it (LLVM's layer
// allocates even those), on that thread: with no child left and no reference on its parent, the
// block goes straight back to `cache`, without release_task's atomic decrement and walk up the
// parents (about 30 instructions of a task's 400: callgrind, taskcost inline).
inline void release_task_run_at_once(Task* task, TaskBlockCache& cache) {
  // acquire: a child that dropped the last reference on it is done with it; nobody can take a new
  // one, its body having returned.
  // With no dependences, too, the Task's destructor has nothing to do (which the compiler then
  // sees, keeping this path short).
  if (task->refs.load(std::memory_order_acquire) != 1 || task->holds_parent ||
      task->block_class < 0 || task->deps != nullptr) [[unlikely]] {
    release_task(task, &cache);
    return;
  }
  const int size_class = task->block_class;
  task->~Task();
  cache.keep(task, size_class);
}

class TaskQueue {
 public:
  // Under lock().
  void push(Task* task);
  // Takes the highest-priority ready task (oldest first), or null. With `ancestor`, only a task
  // descending from it (what taskwait and taskgroup may run): a child of it if one is queued,
  // else a deeper descendant.
  Task* take(const Task* ancestor);

  bool maybe_ready() const { return queued_.load(std::memory_order_relaxed) != 0; }
  // Counts pushes: a waiter that found no task it may run waits for this to change.
  std::uint64_t pushes() const { return pushes_.load(std::memory_order_relaxed); }
  // Tasks created in the team and not finished.
  int pending() const { return pending_.load(std::memory_order_acquire); }
  void created() { pending_.fetch_add(1, std::memory_order_relaxed); }
  // True when it was the last. release: a barrier that sees 0 sees everything the tasks wrote.
  bool finished() { return pending_.fetch_sub(1, std::memory_order_release) == 1; }

  weft::Mutex& lock() { return lock_; }

 private:
  // A queued task with what take() and push() compare, so that their scans read the vector only:
  // following each task pointer costs a cache miss per task once the queue is long.
  struct Entry {
    Task* task;
    const Task* parent;
    int priority;
  };

  weft::Mutex lock_;
  // Ready tasks from ready_[head_] on, by decreasing priority, FIFO within one. A vector, not a
  // deque: a team without tasks (most regions) then allocates nothing.
  std::vector<Entry> ready_;
  std::size_t head_ = 0;
  // Relaxed hint read without the lock by waiters deciding whether to take the lock.
  std::atomic<int> queued_{0};
  std::atomic<std::uint64_t> pushes_{0};
  std::atomic<int> pending_{0};
};

}  // namespace weft::omp
