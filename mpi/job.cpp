#include <memory>
#include <vector>

#include "communicator.h"
#include "weft/mpi_job.h"
#include "weft/placement.h"
#include "weft/scheduler.h"
#include "weft/thread.h"
#include "world.h"

namespace weft::mpi {

namespace {

// The virtual processor each rank is pinned to: the VP of its core (VP i runs core i), wrapped
// when fewer VPs run than the placement uses cores.
std::vector<int> rank_vps(const Config& config, const Scheduler& scheduler, int ranks) {
  const TaskPolicy policy = *parse_task_policy(config.get_string("placement.tasks"));
  const std::vector<TaskPlace> places = place_tasks(
      CoreLayout::of(scheduler.topology()), ranks,
      static_cast<int>(config.get_int("placement.cores_per_task")), policy, ProgressPolicy::none);
  std::vector<int> vps;
  vps.reserve(places.size());
  for (const TaskPlace& place : places) vps.push_back(place.core % scheduler.num_vps());
  return vps;
}

// Clears the job's world when run_job leaves, however it leaves.
struct WorldInstallation {
  explicit WorldInstallation(World* w) { set_world(w); }
  ~WorldInstallation() { set_world(nullptr); }
};

}  // namespace

int run_job(const Config& config, const std::function<int(int rank)>& rank_main) {
  const int ranks = static_cast<int>(config.get_int("mpi.ranks"));
  Scheduler scheduler(config);
  const std::vector<int> vps = rank_vps(config, scheduler, ranks);

  World world(ranks, config.get_size("mpi.eager_limit"),
              config.get_int("scheduler.spin_us") * 1000);
  WorldInstallation installation(&world);
  reset_predefined_comms(ranks);

  std::vector<int> statuses(static_cast<std::size_t>(ranks), 0);
  std::vector<Thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    ThreadAttr attr;
    attr.type = ThreadType::mpi_task;
    attr.placement = Placement::pinned(vps[r]);
    attr.rank = r;
    threads.push_back(spawn(attr, [&rank_main, &statuses, r] { statuses[r] = rank_main(r); }));
  }
  for (Thread& thread : threads) thread.join();
  scheduler.shutdown();

  for (int status : statuses) {
    if (status != 0) return status;
  }
  return 0;
}

}  // namespace weft::mpi
