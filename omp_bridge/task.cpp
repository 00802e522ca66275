#include "task.h"

#include <algorithm>
#include <new>

namespace weft::omp {

bool Task::descends_from(const Task* ancestor) const {
  for (const Task* task = this; task != nullptr; task = task->parent) {
    if (task == ancestor) return true;
  }
  return false;
}

namespace {

// A deferred task and its argument block share one allocation, the block after the Task.
std::size_t data_offset(std::size_t align) {
  const std::size_t a = std::max(align, alignof(std::max_align_t));
  return (sizeof(Task) + a - 1) / a * a;
}

}  // namespace

Task* allocate_task(std::size_t size, std::size_t align) {
  align = std::max(align, alignof(Task));
  const std::size_t offset = data_offset(align);
  void* memory = ::operator new(offset + size, std::align_val_t(align));
  Task* task = new (memory) Task;
  task->data = static_cast<char*>(memory) + offset;
  task->allocation_align = align;
  return task;
}

void release_task(Task* task) {
  // acq_rel: the last reference frees the task after every other user is done with it.
  if (task->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const std::size_t align = task->allocation_align;
  if (align == 0) return;
  task->~Task();
  ::operator delete(static_cast<void*>(task), std::align_val_t(align));
}

void TaskQueue::push(Task* task) {
  // After the last task of equal or higher priority: FIFO within a priority.
  auto at = std::find_if(ready_.begin(), ready_.end(),
                         [&](const Task* queued) { return queued->priority < task->priority; });
  ready_.insert(at, task);
  queued_.fetch_add(1, std::memory_order_relaxed);
  pushes_.fetch_add(1, std::memory_order_relaxed);
}

Task* TaskQueue::take(const Task* ancestor) {
  for (auto it = ready_.begin(); it != ready_.end(); ++it) {
    if (ancestor == nullptr || (*it)->descends_from(ancestor)) {
      Task* task = *it;
      ready_.erase(it);
      queued_.fetch_sub(1, std::memory_order_relaxed);
      return task;
    }
  }
  return nullptr;
}

}  // namespace weft::omp
