// What an OpenMP thread carries: its team and thread number, its ICVs, where it is in the team's
// worksharing constructs, its running task and its hot pool of workers. weft keeps it in the user
// thread's local-data slot (this_thread::local_data), never in a thread_local: the thread may
// resume on another kernel thread after any wait.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "icv.h"
#include "task.h"
#include "weft/this_thread.h"

namespace weft::omp {

struct KmpThread;
class Pool;
struct ContentionGroup;
struct Team;
class WorkShare;

// Where the thread is in its current worksharing loop or sections construct.
struct LoopCursor {
  WorkShare* ws = nullptr;
  std::uint64_t static_chunks = 0;  // static schedule: chunks this thread has taken
  std::uint64_t lo = 0;             // the chunk in progress, for ordered loops
  std::uint64_t hi = 0;
  bool has_chunk = false;
};

// What a thread that enters a nested team saves, to find it again at the end of the region.
struct TeamContext {
  Team* team = nullptr;
  int num = 0;
  std::uint64_t constructs = 0;  // worksharing constructs met in `team`
  LoopCursor loop;
  Task* task = nullptr;
  Icvs icv;
};

struct ThreadState {
  // First, so destroyed last: blocks of the tasks this thread freed, for the next it creates.
  TaskBlockCache task_blocks;
  // Counted tasks the thread created that have not finished: the throttle's measure
  // (tasks_throttled). Dropped by whichever thread finishes one, so on a line of its own, away
  // from what the thread itself uses at every task.
  alignas(64) std::atomic<int> tasks_in_flight{0};
  alignas(64) TeamContext context;
  Task implicit;  // the thread's implicit task in its current team
  // Hot pools, one per nesting level the thread forks teams from: the pool of an enclosing
  // region is busy running it.
  std::vector<std::unique_ptr<Pool>> pools;
  // The virtual processors of the cores the thread's rank owns: where its teams run.
  std::shared_ptr<const std::vector<int>> vps;
  int rank = -1;
  // The place (places.h) a bound worker was pinned to, for omp_get_place_num when places
  // overlap; -1: the first place holding its VP.
  int place = -1;
  // The host teams construct: this initial thread's team in the league, and the league's size.
  int league_num = 0;
  int league_size = 1;
  std::unique_ptr<Team> initial_team;  // a root thread's team of one, outside any region
  std::unique_ptr<ContentionGroup> contention_group;  // a root thread's, which its teams share
  // LLVM's global thread number: unique in the process, as __kmpc_global_thread_num returns it.
  const int gtid;
  // What OMP_DISPLAY_AFFINITY last printed for the thread.
  std::string displayed_affinity;
  // What LLVM's ABI keeps between calls (kmp_thread.h); null until the thread needs it.
  std::unique_ptr<KmpThread> kmp;

  ThreadState();
  ~ThreadState();
  Team& team() const { return *context.team; }
  int num() const { return context.num; }
  Icvs& icv() { return context.icv; }
  Task& task() const { return *context.task; }
};

// The state of a thread that has none yet: a root (a rank's main thread or any other thread that
// meets OpenMP outside a region), at its first OpenMP call.
ThreadState& make_root_state();

// The calling thread's state, created at its first OpenMP call. Inline, with the creation out of
// line: every entry point calls it, and as one function its frame cost as much as the look-up
// (callgrind: 19 of the 36 instructions a call took).
inline ThreadState& self() {
  if (void* data = this_thread::local_data()) return *static_cast<ThreadState*>(data);
  return make_root_state();
}

// The live thread states by their gtid, for LLVM's layer (kmp_thread.h): gtids past the table
// are left out and found through self().
inline constexpr int kGtidSlots = 1 << 18;
extern std::atomic<ThreadState*> states_by_gtid[kGtidSlots];

// The calling thread's state (null when the table does not hold it), whose gtid LLVM's ABI passes
// to most of its calls (the compiler's
// __kmpc_global_thread_num, or the gtid the runtime gave the outlined region or task routine the
// call is made from), as libomp trusts it: a slot of the table costs a load, where self() makes
// three calls into the scheduler, and its register saves in the caller (callgrind, taskcost
// inline: about 30 instructions of __kmpc_omp_task_alloc's 100).
inline ThreadState* state_by_gtid(int gtid) {
  if (static_cast<unsigned>(gtid) >= static_cast<unsigned>(kGtidSlots)) return nullptr;
  // relaxed: the slot was written when the state was made, before its thread could learn its
  // gtid.
  return states_by_gtid[gtid].load(std::memory_order_relaxed);
}
inline ThreadState& self(int gtid) {
  if (ThreadState* state = state_by_gtid(gtid)) return *state;
  return self();
}

// OMP_DISPLAY_AFFINITY: prints the thread's affinity format (affinity-format-var) when it
// changed since the thread last printed it (affinity_format.cpp).
void display_affinity_on_change(ThreadState& self);

// Installs a worker's state in its thread's slot.
void adopt(ThreadState& state);

}  // namespace weft::omp
