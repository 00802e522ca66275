#include "parallel.h"

#include <algorithm>

#include "pool.h"
#include "team.h"
#include "weft/scheduler.h"
#include "weft/trace_team.h"

namespace weft::omp {

int team_size(ThreadState& self, unsigned requested) {
  // No scheduler runs workers in a child of fork (a plain process): its teams are one thread.
  if (Scheduler::current() == nullptr) return 1;
  const Icvs& icv = self.icv();
  const Team& team = self.team();
  if (team.active_level >= icv.max_active_levels) return 1;
  long size = requested != 0 ? static_cast<long>(requested) : icv.num_threads;
  size = std::min<long>(size, icv.thread_limit);
  // dyn-var lets the runtime keep a team to one thread per core of the rank.
  if (icv.dynamic) size = std::min<long>(size, static_cast<long>(self.vps->size()));
  return static_cast<int>(std::max(1L, size));
}

int reserve_threads(ThreadState& self, int size) {
  ContentionGroup* group = self.team().group;
  if (group == nullptr || size <= 1) return size;
  const int limit = self.icv().thread_limit;
  // relaxed: the count only bounds team sizes; it orders nothing else.
  int busy = group->busy.load(std::memory_order_relaxed);
  int more = 0;
  do {
    more = std::clamp(limit - busy, 0, size - 1);
    if (more == 0) break;
  } while (!group->busy.compare_exchange_weak(busy, busy + more, std::memory_order_relaxed));
  return more + 1;
}

void release_threads(ThreadState& self, int size) {
  ContentionGroup* group = self.team().group;
  if (group != nullptr && size > 1) group->busy.fetch_sub(size - 1, std::memory_order_relaxed);
}

void run_parallel(void (*fn)(void*), void* data, unsigned requested, unsigned flags,
                  const std::function<void(ThreadState&, WorkShare&)>& first_loop,
                  TaskGroup* implicit_group, bool reserved) {
  ThreadState& self = omp::self();
  const int size =
      reserved ? static_cast<int>(requested) : reserve_threads(self, team_size(self, requested));
  const Team& outer = self.team();
  Team team(size, outer.level + 1, outer.active_level + (size > 1 ? 1 : 0), self.context.team,
            self.num(), self.icv().for_team(outer.level + 1));
  team.fn = fn;
  team.data = data;
  team.league_num = self.league_num;
  team.league_size = self.league_size;
  team.implicit_group = implicit_group;
  if (first_loop) {
    team.slots[0].enter(0, team.signal);
    first_loop(self, team.slots[0]);
    team.slots[0].published(team.signal);
    team.starts_with_work_share = true;
  }
  const TeamContext saved = self.context;
  // The master's implicit task in the new team; its task in the outer team stays as it was.
  Task implicit;
  {
    // Begins before the workers start: their spans read no clock and are placed no earlier than
    // this begin, whose time they carry (trace::TeamSpan).
    const trace::Span span(trace::Category::omp, "parallel region",
                           static_cast<std::uint64_t>(size), trace::End::with_inner);
    if (size > 1) {
      const auto level = static_cast<std::size_t>(outer.level);
      if (self.pools.size() <= level) self.pools.resize(level + 1);
      if (!self.pools[level]) self.pools[level] = std::make_unique<Pool>(self);
      // The proc_bind clause, else bind-var.
      const unsigned clause = flags & 7;
      team.bind = clause != 0 ? static_cast<ProcBind>(clause) : self.icv().proc_bind;
      const std::uint64_t stamp = trace::enabled(trace::Category::omp) ? trace::stamp() : 0;
      self.pools[level]->start(team, team.bind, stamp);
    }
    enter_team(self, team, 0, implicit);
    fn(data);
    const trace::Span join(trace::Category::omp, "join", 0, trace::End::at_resume);
    master_join(self, team);
  }
  if (team.pool != nullptr) team.pool->keep_spin_budget(team.signal.budget_ns());
  self.context = saved;
  if (!reserved) release_threads(self, size);
}

}  // namespace weft::omp
