#include "coll/progress.h"

#include <map>
#include <mutex>

#include "weft/placement.h"
#include "weft/this_thread.h"

namespace weft::mpi {

ProgressThread::ProgressThread(int vp) {
  ThreadAttr attr;
  attr.type = ThreadType::progress;
  attr.placement = Placement::pinned(vp);
  thread_ = spawn(attr, [this] { loop(); });
}

ProgressThread::~ProgressThread() {
  {
    std::lock_guard lock(lock_);
    stopping_ = true;
  }
  wake_.set();
  thread_.join();
}

void ProgressThread::post(ProgressTask* task) {
  {
    std::lock_guard lock(lock_);
    task->next = head_;
    head_ = task;
  }
  wake_.set();
}

ProgressTask* ProgressThread::take_all() {
  ProgressTask* newest_first = nullptr;
  {
    std::lock_guard lock(lock_);
    newest_first = head_;
    head_ = nullptr;
    if (newest_first == nullptr) wake_.clear();
  }
  ProgressTask* oldest_first = nullptr;
  while (newest_first != nullptr) {
    ProgressTask* next = newest_first->next;
    newest_first->next = oldest_first;
    oldest_first = newest_first;
    newest_first = next;
  }
  return oldest_first;
}

void ProgressThread::loop() {
  for (;;) {
    ProgressTask* task = take_all();
    if (task == nullptr) {
      {
        std::lock_guard lock(lock_);
        if (stopping_ && head_ == nullptr) return;
      }
      wake_.wait();
      continue;
    }
    // Boosted while it holds work: the ranks it works for wait on it, and a rank polling with
    // MPI_Test or spinning in MPI_Wait yields to it.
    this_thread::set_boosted(true);
    while (task != nullptr) {
      ProgressTask* next = task->next;
      task->run(task);
      task = next;
    }
    this_thread::set_boosted(false);
  }
}

ProgressThreads::ProgressThreads(const std::vector<TaskPlace>& places, int num_vps)
    : by_rank_(places.size(), nullptr) {
  std::map<int, ProgressThread*> by_core;
  for (const TaskPlace& place : places) {
    if (place.progress_core < 0) continue;
    ProgressThread*& thread = by_core[place.progress_core];
    if (thread == nullptr) {
      threads_.push_back(std::make_unique<ProgressThread>(place.progress_core % num_vps));
      thread = threads_.back().get();
    }
    by_rank_[static_cast<std::size_t>(place.task)] = thread;
  }
}

}  // namespace weft::mpi
