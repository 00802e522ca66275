#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/numa_staging.h"
#include "comm/communicator.h"
#include "diagnostics/monitor.h"
#include "init/fatal.h"
#include "init/world.h"
#include "request/shared_copy.h"
#include "spawn/job_files.h"
#include "transport/transport.h"
#include "weft/bootstrap.h"
#include "weft/error.h"
#include "weft/mpi_job.h"
#include "weft/placement.h"
#include "weft/scheduler.h"
#include "weft/thread.h"

namespace weft::mpi {

namespace {

// Where the ranks and their progress threads go, by placement.tasks, cores_per_task and
// placement.progress.
std::vector<TaskPlace> place_ranks(const Config& config, const Scheduler& scheduler, int ranks) {
  return place_tasks(CoreLayout::of(scheduler.topology()), ranks,
                     static_cast<int>(config.get_int("placement.cores_per_task")),
                     *parse_task_policy(config.get_string("placement.tasks")),
                     *parse_progress_policy(config.get_string("placement.progress")));
}

constexpr std::string_view kJobKey = "weft.job_key";

// This process's id, the time and a count of the jobs it ran: no two jobs that run at once on a
// host share it.
std::string new_job_key() {
  static std::atomic<std::uint64_t> jobs{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::to_string(::getpid()) + "-" + std::to_string(now) + "-" +
         std::to_string(jobs.fetch_add(1, std::memory_order_relaxed));
}

// Clears the job's world when run_job leaves, however it leaves.
struct WorldInstallation {
  explicit WorldInstallation(World* w) { set_world(w); }
  ~WorldInstallation() { set_world(nullptr); }
};

}  // namespace

int run_job(const Config& config, const std::function<int(int rank)>& rank_main) {
  const std::unique_ptr<Bootstrap> bootstrap =
      connect_bootstrap(static_cast<int>(config.get_int("mpi.ranks")));
  return run_job(config, rank_main, bootstrap.get());
}

int run_job(const Config& config, const std::function<int(int rank)>& rank_main,
            Bootstrap* bootstrap) {
  const RankLayout layout = bootstrap != nullptr
                                ? bootstrap->layout()
                                : RankLayout(static_cast<int>(config.get_int("mpi.ranks")), 1);
  const int process = bootstrap != nullptr ? bootstrap->process() : 0;
  const int first = layout.first_rank(process);
  const int ranks = layout.ranks_of(process);
  Scheduler scheduler(config);
  const std::vector<TaskPlace> places = place_ranks(config, scheduler, ranks);
  collective::numa::configure(config, scheduler, places, first);

  SharedCopy::set_min_bytes(config.get_size("mpi.shared_copy_min"));
  World world(layout, process, config.get_size("mpi.eager_limit"),
              config.get_int("scheduler.spin_us") * 1000);
  WorldInstallation installation(&world);
  reset_predefined_comms(layout.world_size());
  world.set_job_key(new_job_key());
  std::unique_ptr<Transport> transport;
  if (layout.processes() > 1) {
    transport =
        std::make_unique<Transport>(world, *bootstrap, config.get_size("mpi.remote_eager_limit"));
    if (process == 0) bootstrap->put(kJobKey, world.job_key());
    bootstrap->fence();
    world.set_job_key(bootstrap->get(0, kJobKey));
    transport->connect(*bootstrap);
    world.set_transport(transport.get());
    // A rank spinning in a wait progresses the worker itself: its core is busy spinning, so
    // neither an idle core nor the spare kernel thread would see the message soon.
    for (int r = first; r < first + ranks; ++r) {
      world.rank(r).spin.set_progress(
          [](void* t) { return static_cast<Transport*>(t)->progress_for_rank(); }, transport.get());
    }
  }
  world.start_progress(places, scheduler.num_vps());

  std::vector<int> statuses(static_cast<std::size_t>(ranks), 0);
  std::vector<Thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    ThreadAttr attr;
    attr.type = ThreadType::mpi_task;
    // VP i runs core i; with fewer VPs than the placement uses cores, ranks wrap around.
    attr.placement =
        Placement::pinned(places[static_cast<std::size_t>(r)].core % scheduler.num_vps());
    attr.rank = first + r;
    try {
      threads.push_back(
          spawn(attr, [&rank_main, &statuses, r, first] { statuses[r] = rank_main(first + r); }));
    } catch (const Error& error) {
      // The ranks started wait for this one in their first collective: the job cannot go on.
      std::string_view reason = error.what();
      if (reason.starts_with("weft: ")) reason.remove_prefix(6);
      end_job("cannot start rank " + std::to_string(first + r) + " of the " +
              std::to_string(ranks) + " of this process: " + std::string(reason) +
              " (each rank's stack reserves stack.mpi_task = " +
              std::to_string(config.get_size("stack.mpi_task") >> 10) +
              " KiB of address space, committed as it is used)");
    }
  }
  // Watches for deadlocks and answers SIGQUIT with the threads' stacks while the ranks run.
  std::optional<Monitor> monitor(std::in_place, config, world, transport.get(), scheduler);
  for (Thread& thread : threads) thread.join();
  // The ranks MPI_Comm_spawn started run on after their parents' main returned (MPI-4.1 11.10.4:
  // MPI_Finalize of a parent does not end its children).
  const int spawned_status = world.join_spawned();
  if (transport != nullptr) {
    // Every process's ranks have ended before any endpoint closes: a peer may still be fetching
    // rendezvous data from this one until then.
    transport->quiesce();
    bootstrap->fence();
    if (process == 0) remove_job_files(world.job_key());
  }
  monitor.reset();
  world.stop_progress();
  scheduler.shutdown();
  world.discard_unreceived();
  transport.reset();

  for (int status : statuses) {
    if (status != 0) return status;
  }
  return spawned_status;
}

}  // namespace weft::mpi
