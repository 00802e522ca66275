// The job's progress threads: `progress`-type scheduler threads that run the work of nonblocking
// collectives that no rank's call does itself (large copies and reductions, posted by the last
// member to arrive). Placed by placement.progress: one thread per distinct progress core of the
// ranks (Algorithm 2 of notes/seeds.md under `numa`), none under `none`. A thread sleeps while it
// has nothing to do and runs at priority.progress_boost while it holds work.
#pragma once

#include <memory>
#include <vector>

#include "weft/detail/spin_lock.h"
#include "weft/sync.h"
#include "weft/thread.h"

namespace weft {
struct TaskPlace;
}

namespace weft::mpi {

// A unit of work for a progress thread, embedded in whatever posts it; `run` may free it.
struct ProgressTask {
  void (*run)(ProgressTask* task) = nullptr;
  ProgressTask* next = nullptr;
};

class ProgressThread {
 public:
  explicit ProgressThread(int vp);
  // Stops the thread once its queued work is done.
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  // Queues `task` (run in posting order) and wakes the thread; any thread may post.
  void post(ProgressTask* task);

 private:
  void loop();
  // The queued tasks in posting order, emptying the queue; nullptr when it was empty, and then
  // the wake-up event is cleared first, so a later post sets it again.
  ProgressTask* take_all();

  detail::SpinLock lock_;
  ProgressTask* head_ = nullptr;  // guarded by lock_, newest first
  bool stopping_ = false;         // guarded by lock_
  Event wake_;
  Thread thread_;
};

// The progress threads of a job, by world rank.
class ProgressThreads {
 public:
  // One thread per distinct progress core among `places` (none where progress_core is -1); VP i
  // runs core i, wrapped when fewer VPs run.
  ProgressThreads(const std::vector<TaskPlace>& places, int num_vps);

  // The thread serving world rank `rank`, or nullptr when it has none.
  ProgressThread* of(int rank) const { return by_rank_[static_cast<std::size_t>(rank)]; }

 private:
  std::vector<std::unique_ptr<ProgressThread>> threads_;
  std::vector<ProgressThread*> by_rank_;
};

}  // namespace weft::mpi
