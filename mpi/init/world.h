// The running job as MPI sees it: how many ranks, which of them this process holds, and what each
// of its ranks keeps for its whole life (its MPI state, its matching engine, its attached Bsend
// buffer). One World exists while run_job runs; every rank of the process shares it. Ranks of
// other processes are reached through the job's transport.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "attr/datatype_attributes.h"
#include "coll/progress.h"
#include "mpi.h"
#include "pt2pt/bsend_buffer.h"
#include "pt2pt/engine.h"
#include "request/completion.h"
#include "request/request.h"
#include "weft/bootstrap.h"
#include "weft/thread.h"

namespace weft::mpi {

struct RankState {
  enum class Phase : int { fresh, initialized, finalized };

  // Written by the rank's own threads; read by any of them (MPI_Initialized from another thread
  // of the rank), hence atomic.
  std::atomic<Phase> phase{Phase::fresh};
  // `phase` says whether the rank may call MPI: it is initialized while the world model is
  // (MPI_Init to MPI_Finalize) or any session is open (MPI-4.1 11.3), each of which may start and
  // end without the other. `world_model` is the world model's own phase, what MPI_Initialized and
  // MPI_Finalized report; `sessions` counts the open sessions. Both change under usage_lock.
  std::atomic<Phase> world_model{Phase::fresh};
  int sessions = 0;
  std::mutex usage_lock;
  int thread_level = MPI_THREAD_SINGLE;
  std::uint64_t main_thread = 0;  // weft thread id of the caller of MPI_Init(_thread)

  Engine engine;  // where the rank's incoming messages are matched
  BsendBuffer bsend;
  RequestPool requests;  // for the rank's nonblocking calls
  SpinBudget spin;       // how long the rank's waits spin before they park
  // The attributes the rank set on datatypes.
  DatatypeAttributes type_attributes;
  int last_used_code = MPI_ERR_LASTCODE;  // where the MPI_LASTUSEDCODE attribute points

  // The world the rank belongs to (mpi/spawn/): its MPI_COMM_WORLD and MPI_COMM_SELF objects,
  // the job's predefined ones unless MPI_Comm_spawn started the rank; the intercommunicator to
  // its parents (MPI_Comm_get_parent) and its command's index in MPI_Comm_spawn_multiple.
  MPI_Comm world_comm = nullptr;
  MPI_Comm self_comm = nullptr;
  MPI_Comm parent = nullptr;
  int appnum = 0;
};

class Transport;

class World {
 public:
  // The whole job's layout and the index of this process in it.
  World(const RankLayout& layout, int process, std::size_t eager_limit, std::int64_t spin_limit_ns);
  // Gives back the messages nobody received, while every rank's requests still exist (an
  // unreceived rendezvous message lives in its sender's request) and the transport too (a
  // remote one is a descriptor of it). Done again by the destructor.
  void discard_unreceived();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // The size of the job's first world (the ranks weftrun started).
  int size() const { return layout_.world_size(); }
  const RankLayout& layout() const { return layout_; }
  int process() const { return process_; }
  std::size_t eager_limit() const { return eager_limit_; }
  std::int64_t spin_limit_ns() const { return spin_limit_ns_; }
  // The ranks this process holds: [first_local(), first_local() + local_ranks()).
  int first_local() const { return first_; }
  int local_ranks() const { return local_; }
  bool is_local(int world_rank) const {
    if (world_rank < size()) return world_rank >= first_ && world_rank < first_ + local_;
    return process_of(world_rank) == process_;
  }
  // The process holding a world rank. Ranks that MPI_Comm_spawn starts live in the process of
  // the spawn's root and get the numbers size() + process + processes * k, k = 0, 1...: every
  // process numbers its own without asking the others, and all know where any rank lives.
  int process_of(int world_rank) const {
    if (world_rank < size()) return layout_.process_of(world_rank);
    return (world_rank - size()) % layout_.processes();
  }
  bool single_process() const { return layout_.processes() == 1; }
  // A rank of this process.
  RankState& rank(int world_rank) {
    if (world_rank < size()) return ranks_[world_rank - first_];
    // acquire: the state was made before its number was handed to anyone.
    return *spawned_[(world_rank - size()) / layout_.processes()].load(std::memory_order_acquire);
  }

  // New ranks of this process for MPI_Comm_spawn: their numbers, states made. Throws weft::Error
  // when the process has started as many as it can hold.
  std::vector<int> add_ranks(int count);
  // MPI_UNIVERSE_SIZE: the first world and the ranks every process may still spawn.
  int universe_size() const { return size() + layout_.processes() * kSpawnCapacity; }
  // A spawned rank's thread, joined by join_spawned; `status` is where its main's exit status
  // goes.
  void keep_spawned(Thread thread, std::shared_ptr<int> status);
  // Joins the threads of the spawned ranks, those they spawn in turn too; returns the first
  // non-zero exit status among them, else 0.
  int join_spawned();
  // A name of this job that no other job running at the same time has, the same in all its
  // processes (the file of its published service names: mpi/spawn/name_service.cpp).
  const std::string& job_key() const { return job_key_; }
  void set_job_key(std::string key) { job_key_ = std::move(key); }
  // Keeps an object of a spawned world (its MPI_COMM_WORLD, MPI_COMM_SELF) until the job ends.
  void keep(std::shared_ptr<void> object);

  // What carries messages to the ranks of other processes; nullptr in a single-process job.
  Transport* transport() const { return transport_; }
  void set_transport(Transport* transport) { transport_ = transport; }

  // The progress thread serving a rank of this process, or nullptr (none in the job, or none
  // for it).
  ProgressThread* progress_of(int world_rank) const {
    // A spawned rank has none: its nonblocking collectives progress in its own threads.
    if (progress_ == nullptr || world_rank >= size()) return nullptr;
    return progress_->of(world_rank - first_);
  }
  // Starts the progress threads of this process's ranks (`places`, in local rank order), before
  // any rank runs.
  void start_progress(const std::vector<TaskPlace>& places, int num_vps);
  // Stops them once they have done their queued work; the scheduler must still run.
  void stop_progress();

 private:
  const RankLayout layout_;
  const int process_;
  const int first_;
  const int local_;
  const std::size_t eager_limit_;
  const std::int64_t spin_limit_ns_;
  std::unique_ptr<RankState[]> ranks_;
  std::unique_ptr<ProgressThreads> progress_;
  Transport* transport_ = nullptr;
  std::string job_key_;

  // The ranks spawned in this process, by (world rank - size()) / processes.
  // As many as vm.max_map_count lets one process load copies of a program for
  // (docs/privatization.md).
  static constexpr int kSpawnCapacity = 16000;
  std::unique_ptr<std::atomic<RankState*>[]> spawned_;
  std::mutex spawn_lock;  // guards the members below and adding to spawned_
  std::vector<std::unique_ptr<RankState>> spawned_states_;
  std::vector<std::pair<Thread, std::shared_ptr<int>>> spawned_threads_;
  std::vector<std::shared_ptr<void>> kept_;
};

// The job's world, or nullptr outside run_job. Set by run_job before the ranks start and cleared
// after they have ended, so ranks may read it without synchronisation.
World* world();
void set_world(World* world);

// What a nonblocking call that found nothing done does before it returns: progresses the
// transport (a job of several processes) and lets the core's other threads run (a rank polling
// with MPI_Test may wait for a rank of its own core, which runs only when it yields).
void after_failed_test();

// The world rank of the calling thread (-1 when it belongs to no rank), and its state.
int caller_world_rank();
RankState& caller_state();  // requires caller_world_rank() >= 0 and a world

// The MPI_COMM_WORLD and MPI_COMM_SELF of the calling rank's world (those of the job unless the
// rank was spawned); the job's when the caller is no rank.
MPI_Comm caller_world_comm();
MPI_Comm caller_self_comm();

}  // namespace weft::mpi
