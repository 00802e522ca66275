// The omp_* runtime API (include/omp.h), other than locks.
#include <algorithm>
#include <chrono>
#include <vector>

#include "omp.h"
#include "places.h"
#include "pool.h"
#include "task_scheduling.h"
#include "team.h"
#include "thread_state.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"

namespace weft::omp {
namespace {

// The team at nesting `level` around the caller, or null.
const Team* team_at(int level) {
  const Team* team = &self().team();
  while (team != nullptr && team->level > level) team = team->parent;
  return team != nullptr && team->level == level ? team : nullptr;
}

int core_count() {
  return std::max<int>(1, static_cast<int>(self().vps->size()));
}

int place_count() {
  return static_cast<int>(rank_places(*self().vps).size());
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void omp_set_num_threads(int count) throw() {
  self().icv().num_threads = std::max(1, count);
}
int omp_get_num_threads() throw() {
  return self().team().size;
}
int omp_get_max_threads() throw() {
  ThreadState& state = self();
  return std::min(state.icv().num_threads, state.icv().thread_limit);
}
int omp_get_thread_num() throw() {
  return self().num();
}
// The processors available to the caller: its rank's cores.
int omp_get_num_procs() throw() {
  return core_count();
}
int omp_in_parallel() throw() {
  return self().team().active_level > 0 ? 1 : 0;
}
void omp_set_dynamic(int dynamic) throw() {
  self().icv().dynamic = dynamic != 0;
}
int omp_get_dynamic() throw() {
  return self().icv().dynamic ? 1 : 0;
}
void omp_set_nested(int nested) throw() {
  self().icv().max_active_levels = nested != 0 ? kSupportedActiveLevels : 1;
}
int omp_get_nested() throw() {
  return self().icv().max_active_levels > 1 ? 1 : 0;
}
int omp_get_thread_limit() throw() {
  return self().icv().thread_limit;
}
void omp_set_max_active_levels(int levels) throw() {
  if (levels >= 0) self().icv().max_active_levels = std::min(levels, kSupportedActiveLevels);
}
int omp_get_max_active_levels() throw() {
  return self().icv().max_active_levels;
}
int omp_get_supported_active_levels() throw() {
  return kSupportedActiveLevels;
}
int omp_get_level() throw() {
  return self().team().level;
}
int omp_get_ancestor_thread_num(int level) throw() {
  ThreadState& state = self();
  if (level < 0 || level > state.team().level) return -1;
  if (level == state.team().level) return state.num();
  const Team* inner = &state.team();
  while (inner != nullptr && inner->level > level + 1) inner = inner->parent;
  return inner != nullptr && inner->level == level + 1 ? inner->parent_num : -1;
}
int omp_get_team_size(int level) throw() {
  const Team* team = team_at(level);
  return team != nullptr ? team->size : -1;
}
int omp_get_active_level() throw() {
  return self().team().active_level;
}
void omp_set_schedule(omp_sched_t kind, int chunk) throw() {
  const int base = static_cast<int>(static_cast<unsigned>(kind) & 0x7fffffffU);
  if (base < 1 || base > 4) return;
  const bool monotonic = (static_cast<unsigned>(kind) & 0x80000000U) != 0;
  self().icv().run_schedule = {static_cast<ScheduleKind>(base), chunk < 1 ? 0 : chunk, monotonic};
}
void omp_get_schedule(omp_sched_t* kind, int* chunk) throw() {
  const Schedule& schedule = self().icv().run_schedule;
  *kind = static_cast<omp_sched_t>(static_cast<unsigned>(schedule.kind) |
                                   (schedule.monotonic ? 0x80000000U : 0U));
  *chunk = static_cast<int>(schedule.chunk);
}
int omp_in_final() throw() {
  return self().task().final ? 1 : 0;
}
// The handle is the task's address (GOMP_task stored it in the detach clause's variable).
void omp_fulfill_event(omp_event_handle_t event) throw() {
  fulfill(*reinterpret_cast<Task*>(static_cast<std::uintptr_t>(event)));
}
int omp_get_cancellation() throw() {
  return global_icvs().cancellation ? 1 : 0;
}
int omp_get_max_task_priority() throw() {
  return global_icvs().max_task_priority;
}

omp_proc_bind_t omp_get_proc_bind() throw() {
  return static_cast<omp_proc_bind_t>(self().icv().proc_bind);
}
int omp_get_num_places() throw() {
  return place_count();
}
int omp_get_place_num_procs(int place) throw() {
  const auto places = rank_places(*self().vps);
  if (place < 0 || place >= static_cast<int>(places.size())) return 0;
  return std::max<int>(1,
                       static_cast<int>(places[static_cast<std::size_t>(place)].processors.size()));
}
void omp_get_place_proc_ids(int place, int* ids) throw() {
  const auto places = rank_places(*self().vps);
  if (place < 0 || place >= static_cast<int>(places.size())) return;
  for (int processor : places[static_cast<std::size_t>(place)].processors) *ids++ = processor;
}
// The place the caller is bound to; -1 for a thread that is not bound (it may move), as OpenMP
// specifies. A team of one thread is bound as its master is.
int omp_get_place_num() throw() {
  ThreadState& state = self();
  const Team* team = state.context.team;
  while (team->size == 1 && team->parent != nullptr) team = team->parent;
  const ProcBind bind = team->size == 1 ? state.icv().proc_bind : team->bind;
  if (bind == ProcBind::false_) return -1;
  const std::vector<int>& vps = *state.vps;
  const auto found = std::find(vps.begin(), vps.end(), weft::this_thread::vp());
  if (found == vps.end()) return -1;
  if (state.place >= 0) return state.place;
  return place_holding(rank_places(vps), static_cast<int>(found - vps.begin()));
}
int omp_get_partition_num_places() throw() {
  return place_count();
}
void omp_get_partition_place_nums(int* places) throw() {
  const int count = place_count();
  for (int i = 0; i < count; ++i) places[i] = i;
}

void omp_set_default_device(int) throw() {}
int omp_get_default_device() throw() {
  return 0;
}
int omp_get_num_devices() throw() {
  return 0;
}
int omp_get_device_num() throw() {
  return omp_get_initial_device();
}
int omp_get_num_teams() throw() {
  return self().league_size;
}
int omp_get_team_num() throw() {
  return self().league_num;
}
int omp_is_initial_device() throw() {
  return 1;
}
int omp_get_initial_device() throw() {
  return omp_get_num_devices();
}

double omp_get_wtime() throw() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double omp_get_wtick() throw() {
  return 1e-9;
}

// The caller's hot workers (parked between regions) end here; the next region starts new ones.
// Outside any parallel region only: a thread in a region is using its pools.
int omp_pause_resource(omp_pause_resource_t kind, int device) throw() {
  if (device != omp_get_initial_device()) return -1;
  return omp_pause_resource_all(kind);
}
int omp_pause_resource_all(omp_pause_resource_t kind) throw() {
  if (kind != omp_pause_soft && kind != omp_pause_hard) return -1;
  ThreadState& state = self();
  if (state.team().level != 0) return -1;
  // Innermost first, as a worker's own pools end with it.
  while (!state.pools.empty()) state.pools.pop_back();
  return 0;
}
void omp_display_env(int) throw() {
  display_environment();
}

}  // extern "C"
