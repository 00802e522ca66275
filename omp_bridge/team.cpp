#include "team.h"

#include "thread_state.h"

namespace weft::omp {

Team::Team(int size, int level, int active_level, Team* parent, int parent_num, const Icvs& icv)
    : size(size),
      level(level),
      active_level(active_level),
      parent(parent),
      parent_num(parent_num),
      icv(icv),
      group(parent != nullptr ? parent->group : nullptr),
      barrier(size, tasks, cancelled, signal) {
  for (int slot = 0; slot < kWorkShareSlots; ++slot) {
    slots[static_cast<std::size_t>(slot)].reset(static_cast<std::uint64_t>(slot));
  }
}

void enter_team(ThreadState& self, Team& team, int num, Task& implicit) {
  implicit.implicit = true;
  implicit.group = team.implicit_group;
  if (implicit.deps != nullptr) implicit.deps->children.clear();
  LoopCursor loop;
  std::uint64_t constructs = 0;
  if (team.starts_with_work_share) {
    loop.ws = &team.slots[0];
    constructs = 1;
  }
  self.context = {&team, num, constructs, loop, &implicit, team.icv};
  self.league_num = team.league_num;
  self.league_size = team.league_size;
  if (team.level > 0 && global_icvs().display_affinity) display_affinity_on_change(self);
}

}  // namespace weft::omp
