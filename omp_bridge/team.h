// A team: the threads running one parallel region. The master's stack holds it for the length of
// the region; the workers (from the master's hot Pool) only point at it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "icv.h"
#include "signal.h"
#include "task.h"
#include "work_share.h"

namespace weft::omp {

class Pool;
struct ThreadState;

// The team's barrier: done when every thread has arrived and every task of the team has
// finished; threads waiting at it run the team's queued tasks.
class TeamBarrier {
 public:
  TeamBarrier(int size, TaskQueue& tasks, const std::atomic<bool>& cancelled, Signal& signal)
      : size_(size), tasks_(tasks), cancelled_(cancelled), signal_(signal) {}
  // Returns at once in a cancelled region: the threads that cancelled will not come.
  void wait(ThreadState& self);
  // Barriers the team completed so far (a pool's worker sizes its shares by them, pool.cpp).
  // relaxed: a count for a placement choice, read by a thread past its last barrier.
  std::uint64_t completed() const { return generation_.load(std::memory_order_relaxed); }

 private:
  // Completes the barrier if everyone arrived and no task is left; true when this call did.
  bool try_complete(std::uint64_t generation);

  const int size_;
  TaskQueue& tasks_;
  const std::atomic<bool>& cancelled_;
  Signal& signal_;
  std::atomic<int> arrived_{0};
  std::atomic<std::uint64_t> generation_{0};
};

// A contention group (OpenMP 5.1 1.2.2): an initial thread and the threads of the regions it and
// they encounter, which together may not exceed thread-limit-var. `busy` counts them.
struct ContentionGroup {
  std::atomic<int> busy{1};
};

struct Team {
  Team(int size, int level, int active_level, Team* parent, int parent_num, const Icvs& icv);

  const int size;
  const int level;                   // enclosing parallel regions, this one included
  const int active_level;            // enclosing regions of more than one thread
  Team* const parent;                // null for a root's initial team
  const int parent_num;              // the master's thread number in the parent team
  const Icvs icv;                    // what the team's threads start with
  ProcBind bind = ProcBind::false_;  // how the team's threads were placed: false, unbound
  int league_num = 0;  // the master's team in a host teams league, and the league's size
  int league_size = 1;
  ContentionGroup* group;    // the contention group of the team's threads: its parent's
  bool display_all = false;  // OMP_DISPLAY_AFFINITY: the workers were placed anew

  void (*fn)(void*) = nullptr;
  void* data = nullptr;
  Pool* pool = nullptr;  // the master's workers, null for a team of one
  // Combined parallel loops and sections: construct 0 is set up before the threads start.
  bool starts_with_work_share = false;
  // reduction(task, ...) on the region: the taskgroup of every implicit task, holding the
  // registration (GOMP_parallel_reductions); null otherwise.
  TaskGroup* implicit_group = nullptr;

  // What the team's threads wait on; notified by whoever completes a barrier, queues or
  // finishes a task, or joins.
  Signal signal;
  TaskQueue tasks;
  std::atomic<bool> cancelled{false};  // the region was cancelled (OMP_CANCELLATION)
  // LLVM's ABI: the team's current loop or sections construct was cancelled; its static loops
  // have no worksharing slot to hold it. Cleared at the cancellation barrier that ends it.
  std::atomic<bool> construct_cancelled{false};
  TeamBarrier barrier;
  std::array<WorkShare, kWorkShareSlots> slots;
  // Workers that reached the end of the region with no task left to help with.
  std::atomic<int> joined{0};
  // Threads still notifying after the change that may let the master end the region: it waits
  // for them before the team leaves its stack.
  std::atomic<int> touching{0};
};

// Makes the caller thread `num` of `team`, running `implicit` as its implicit task.
void enter_team(ThreadState& self, Team& team, int num, Task& implicit);

// The end of a parallel region. A worker helps with the team's tasks until none is left, then
// joins; it touches nothing of the team after that (the team lives on the master's stack).
void worker_join(ThreadState& self, Team& team);
// The master returns once every worker joined and every task finished, running tasks meanwhile.
void master_join(ThreadState& self, Team& team);

}  // namespace weft::omp
