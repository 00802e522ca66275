#include "task.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <new>

#include "thread_state.h"
#include "weft/this_thread.h"

namespace weft::omp {

bool Task::descends_from(const Task* ancestor) const {
  for (const Task* task = this; task != nullptr; task = task->parent) {
    if (task == ancestor) return true;
  }
  return false;
}

namespace {

using FreeBlock = TaskBlockCache::FreeBlock;

// The process's batches of free task blocks (TaskBlockCache). Bounded: past kBatches per class a
// surplus goes back to the heap, so a program that once ran many tasks on one thread and created
// them on another keeps at most that much.
class TaskBlockDepot {
 public:
  static constexpr int kBatches = 16;

  // False when the class is full.
  bool put(int size_class, FreeBlock* batch) {
    const auto c = static_cast<std::size_t>(size_class);
    const std::lock_guard<weft::Mutex> lock(lock_);
    if (counts_[c] == kBatches) return false;
    batch->next_batch = batches_[c];
    batches_[c] = batch;
    ++counts_[c];
    empty_hint_[c].store(false, std::memory_order_relaxed);
    return true;
  }
  // A batch of the class, or null.
  FreeBlock* get(int size_class) {
    const auto c = static_cast<std::size_t>(size_class);
    // relaxed: a hint that spares the lock when the depot is empty (a thread that creates its own
    // tasks and runs them finds it so), written under the lock; a batch put meanwhile is found at
    // the next miss.
    if (empty_hint_[c].load(std::memory_order_relaxed)) return nullptr;
    const std::lock_guard<weft::Mutex> lock(lock_);
    FreeBlock* batch = batches_[c];
    if (batch != nullptr) {
      batches_[c] = batch->next_batch;
      --counts_[c];
    }
    empty_hint_[c].store(batches_[c] == nullptr, std::memory_order_relaxed);
    return batch;
  }

 private:
  weft::Mutex lock_;
  std::array<FreeBlock*, TaskBlockCache::kClasses> batches_{};
  std::array<int, TaskBlockCache::kClasses> counts_{};
  std::array<std::atomic<bool>, TaskBlockCache::kClasses> empty_hint_{true, true, true, true};
};

// Never destroyed: a thread's cache may spill into it while the process exits.
TaskBlockDepot& depot() {
  static auto* const instance = new TaskBlockDepot;
  return *instance;
}

void free_blocks(FreeBlock* block) {
  while (block != nullptr) {
    FreeBlock* const next = block->next;
    ::operator delete(static_cast<void*>(block), std::align_val_t(TaskBlockCache::kAlign));
    block = next;
  }
}

}  // namespace

TaskBlockCache::~TaskBlockCache() {
  for (FreeBlock* head : heads_) free_blocks(head);
}

void* TaskBlockCache::take_from_depot(int size_class) {
  FreeBlock* const batch = depot().get(size_class);
  if (batch == nullptr) return nullptr;
  const auto c = static_cast<std::size_t>(size_class);
  heads_[c] = batch->next;
  counts_[c] = kBatch - 1;
  return batch;
}

void TaskBlockCache::keep_after_spilling(void* block, int size_class) {
  const auto c = static_cast<std::size_t>(size_class);
  FreeBlock* const batch = heads_[c];
  FreeBlock* last = batch;
  for (int i = 1; i < kBatch; ++i) last = last->next;
  heads_[c] = last->next;
  last->next = nullptr;
  counts_[c] -= kBatch;
  if (!depot().put(size_class, batch)) free_blocks(batch);
  keep(block, size_class);
}

// Only the OpenMP bridge uses the slot.
TaskBlockCache* calling_thread_block_cache() {
  void* state = this_thread::local_data();
  return state != nullptr ? &static_cast<ThreadState*>(state)->task_blocks : nullptr;
}

Task* allocate_task_from_heap(std::size_t size, std::size_t align) {
  align = std::max(align, alignof(Task));
  const std::size_t offset = task_data_offset(align);
  const int size_class =
      align <= TaskBlockCache::kAlign ? TaskBlockCache::size_class(offset + size) : -1;
  void* memory = nullptr;
  if (size_class >= 0) {
    memory = ::operator new(TaskBlockCache::block_size(size_class),
                            std::align_val_t(TaskBlockCache::kAlign));
  } else {
    memory = ::operator new(offset + size, std::align_val_t(align));
  }
  Task* task = new (memory) Task;
  task->data = static_cast<char*>(memory) + offset;
  task->allocation_align = size_class >= 0 ? TaskBlockCache::kAlign : align;
  task->block_class = static_cast<std::int8_t>(size_class);
  return task;
}

void release_task(Task* task, TaskBlockCache* cache) {
  // Up the chain of parents, as long as each reference dropped is the last.
  while (task != nullptr) {
    // acq_rel: the last reference frees the task after every other user is done with it.
    if (task->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    Task* const parent = task->holds_parent ? task->parent : nullptr;
    // A task on a stack is its creator's to end.
    if (const std::size_t align = task->allocation_align; align != 0) {
      const int size_class = task->block_class;
      task->~Task();
      if (size_class >= 0 && cache != nullptr) {
        cache->keep(task, size_class);
      } else {
        ::operator delete(static_cast<void*>(task), std::align_val_t(align));
      }
    }
    task = parent;
  }
}

void TaskQueue::push(Task* task) {
  // After the last task of equal or higher priority: FIFO within a priority. Most tasks share
  // one priority, so the search starts from the back.
  std::size_t at = ready_.size();
  while (at > head_ && ready_[at - 1].priority < task->priority) --at;
  ready_.insert(ready_.begin() + static_cast<std::ptrdiff_t>(at),
                Entry{task, task->parent, task->priority});
  queued_.fetch_add(1, std::memory_order_relaxed);
  pushes_.fetch_add(1, std::memory_order_relaxed);
}

Task* TaskQueue::take(const Task* ancestor) {
  std::size_t at = head_;
  if (ancestor != nullptr) {
    // A child first (taskwait's case), found without leaving the vector; only then a deeper
    // descendant, which needs each task's chain of parents.
    while (at < ready_.size() && ready_[at].parent != ancestor) ++at;
    if (at == ready_.size()) {
      at = head_;
      while (at < ready_.size() && !ready_[at].task->descends_from(ancestor)) ++at;
    }
  }
  if (at == ready_.size()) return nullptr;
  Task* const task = ready_[at].task;
  if (at == head_) {
    ++head_;
  } else {
    ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(at));
  }
  if (head_ == ready_.size()) {
    ready_.clear();
    head_ = 0;
  }
  queued_.fetch_sub(1, std::memory_order_relaxed);
  return task;
}

}  // namespace weft::omp
