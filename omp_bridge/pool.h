// A thread's hot team: the omp_worker threads it forked for its parallel regions, kept parked
// between regions and reused by the next one. Workers are started through a binary tree (the
// master wakes threads 1 and 2, thread i wakes 2i+1 and 2i+2), so that no single thread pays for
// waking a large team.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "icv.h"
#include "weft/thread.h"

namespace weft::omp {

struct Team;
struct ThreadState;
struct Worker;

class Pool {
 public:
  // Workers of `owner`, whose current VP is the first place of its teams.
  explicit Pool(ThreadState& owner);
  // Ends and joins every worker.
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Hands `team` (its size, function and data set) to workers 1..size-1, placed by `bind`, and
  // wakes them. The caller then runs thread 0.
  // `trace_stamp`: the master's trace::stamp() at its region's begin, which its workers' spans
  // are placed after (0 while no trace records OpenMP).
  void start(Team& team, ProcBind bind, std::uint64_t trace_stamp);
  // Wakes thread `num` of the team if it exists (the tree's edges).
  void wake(int num);
  // The spin budget its last team's waits adapted to (signal.h), which the next team starts with.
  void keep_spin_budget(std::int64_t budget_ns) { spin_budget_ns_ = budget_ns; }

 private:
  Worker& worker(int num);
  void grow(int size, ProcBind bind);

  ThreadState& owner_;
  ProcBind bind_ = ProcBind::false_;
  bool placed_anew_ = false;  // workers spawned since the last start (OMP_DISPLAY_AFFINITY)
  std::vector<std::unique_ptr<Worker>> workers_;  // workers_[i] is thread i + 1
  int size_ = 0;                                  // of the team being started
  int places_ = 0;                                // the rank's places when workers were placed
  std::int64_t spin_budget_ns_ = -1;              // none kept yet
};

}  // namespace weft::omp
