#include "thread_state.h"

#include <algorithm>
#include <atomic>

#include "kmp_thread.h"
#include "pool.h"
#include "team.h"
#include "weft/config.h"
#include "weft/placement.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"

namespace weft::omp {

namespace {

// The VPs of the cores `rank` owns (placement.tasks, placement.cores_per_task), as the MPI job
// places ranks; a job of one rank, or a thread of no rank, owns every VP: a program run without
// weftrun uses the node as OpenMP would.
std::vector<int> rank_vps(const Scheduler& scheduler, int rank) {
  std::vector<int> vps;
  const Config& config = scheduler.config();
  const int ranks = static_cast<int>(config.get_int("mpi.ranks"));
  if (rank >= 0 && ranks > 1) {
    const std::vector<TaskPlace> places =
        place_tasks(CoreLayout::of(scheduler.topology()), ranks,
                    static_cast<int>(config.get_int("placement.cores_per_task")),
                    *parse_task_policy(config.get_string("placement.tasks")), ProgressPolicy::none);
    if (rank < static_cast<int>(places.size())) {
      for (int core : places[static_cast<std::size_t>(rank)].cores) {
        const int vp = core % scheduler.num_vps();
        if (std::find(vps.begin(), vps.end(), vp) == vps.end()) vps.push_back(vp);
      }
    }
  }
  if (vps.empty()) {
    for (int vp = 0; vp < scheduler.num_vps(); ++vp) vps.push_back(vp);
  }
  return vps;
}

void destroy_root(void* state) {
  delete static_cast<ThreadState*>(state);
}

// relaxed: only uniqueness matters.
std::atomic<int> next_gtid{0};

}  // namespace

std::atomic<ThreadState*> states_by_gtid[kGtidSlots];

ThreadState::ThreadState() : gtid(next_gtid.fetch_add(1, std::memory_order_relaxed)) {
  // relaxed: the state reaches its thread (and its gtid the program) through what starts the
  // thread or returns the state, which orders this store before them.
  if (gtid < kGtidSlots) states_by_gtid[gtid].store(this, std::memory_order_relaxed);
}

ThreadState::~ThreadState() {
  if (gtid < kGtidSlots) states_by_gtid[gtid].store(nullptr, std::memory_order_relaxed);
}

ThreadState& make_root_state() {
  auto state = std::make_unique<ThreadState>();
  state->rank = this_thread::rank();
  const Scheduler* scheduler = Scheduler::current();
  state->vps = std::make_shared<const std::vector<int>>(
      scheduler != nullptr ? rank_vps(*scheduler, state->rank) : std::vector<int>{});
  const Icvs icv = Icvs::initial(std::max<int>(1, static_cast<int>(state->vps->size())));
  state->initial_team = std::make_unique<Team>(1, 0, 0, nullptr, 0, icv);
  state->contention_group = std::make_unique<ContentionGroup>();
  state->initial_team->group = state->contention_group.get();
  state->implicit.implicit = true;
  state->context = {state->initial_team.get(), 0, 0, {}, &state->implicit, icv};
  ThreadState& result = *state;
  // The root's hot pool ends with its thread (the rank's main): its workers must be gone before
  // the job's scheduler shuts down.
  this_thread::set_local_data(state.release(), &destroy_root);
  return result;
}

void adopt(ThreadState& state) {
  this_thread::set_local_data(&state);
}

}  // namespace weft::omp
