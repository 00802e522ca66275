// The running job as MPI sees it: how many ranks, and what each rank keeps for its whole life
// (its MPI state, its matching engine, its attached Bsend buffer). One World exists while
// run_job runs; every rank of the process shares it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bsend_buffer.h"
#include "completion.h"
#include "engine.h"
#include "mpi.h"
#include "progress.h"
#include "request.h"

namespace weft::mpi {

struct RankState {
  enum class Phase : int { fresh, initialized, finalized };

  // Written by the rank's own threads; read by any of them (MPI_Initialized from another thread
  // of the rank), hence atomic.
  std::atomic<Phase> phase{Phase::fresh};
  int thread_level = MPI_THREAD_SINGLE;
  std::uint64_t main_thread = 0;  // weft thread id of the caller of MPI_Init(_thread)

  Engine engine;  // where the rank's incoming messages are matched
  BsendBuffer bsend;
  RequestPool requests;  // for the rank's nonblocking calls
  SpinBudget spin;       // how long the rank's waits spin before they park
};

class World {
 public:
  World(int size, std::size_t eager_limit, std::int64_t spin_limit_ns);
  // Gives back the eager messages nobody received, while every rank's requests still exist (an
  // unreceived rendezvous message lives in its sender's request).
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int size() const { return size_; }
  std::size_t eager_limit() const { return eager_limit_; }
  std::int64_t spin_limit_ns() const { return spin_limit_ns_; }
  RankState& rank(int world_rank) { return ranks_[world_rank]; }

  // The progress thread serving a world rank, or nullptr (none in the job, or none for it).
  ProgressThread* progress_of(int world_rank) const {
    return progress_ != nullptr ? progress_->of(world_rank) : nullptr;
  }
  // Starts the job's progress threads (ProgressThreads), before any rank runs.
  void start_progress(const std::vector<TaskPlace>& places, int num_vps);
  // Stops them once they have done their queued work; the scheduler must still run.
  void stop_progress();

 private:
  const int size_;
  const std::size_t eager_limit_;
  const std::int64_t spin_limit_ns_;
  std::unique_ptr<RankState[]> ranks_;
  std::unique_ptr<ProgressThreads> progress_;
};

// The job's world, or nullptr outside run_job. Set by run_job before the ranks start and cleared
// after they have ended, so ranks may read it without synchronisation.
World* world();
void set_world(World* world);

// The world rank of the calling thread (-1 when it belongs to no rank), and its state.
int caller_world_rank();
RankState& caller_state();  // requires caller_world_rank() >= 0 and a world

}  // namespace weft::mpi
