// The job's watcher in each process: a kernel thread outside the scheduler that
// - proves deadlocks: every user thread parked in the same park at two looks a period apart
//   (100 ms, longer where a look costs more than 1 % of a core: monitor.cpp), every rank's
//   thread parked in an MPI call (its blocked-in record), no thread waiting with a
//   deadline and, across processes, no message in flight (termination detection below). It then
//   prints the wait-for graph (wait_graph.h) and ends the job with kDeadlockExitStatus;
// - gives a not-proven report when no rank thread woke, parked or exchanged a message for
//   deadlock.timeout seconds;
// - prints every user thread's stack on SIGQUIT (to stderr, or to the file weft-info stacks
//   asked for), or where each thread is placed and runs (weft-info placement --pid).
//
// Across processes each process writes its state to a file of the job's directory whenever it
// changes: a generation bumped at every change, whether it is quiescent, and the messages it sent
// to and took in from each process. Process 0 declares the deadlock when two reads in a row see
// every process quiescent, no generation changed and every process's sent count to each other
// equal to what that one took in: a message in flight, or a process that woke, prevents it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "weft/config.h"
#include "weft/scheduler.h"

namespace weft::mpi {

class World;
class Transport;

class Monitor {
 public:
  Monitor(const Config& config, World& world, Transport* transport, const Scheduler& scheduler);
  // Stops the watcher and removes its files.
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

 private:
  struct Look;
  void loop();
  Look look();
  // What SIGQUIT asks: the stacks, or the placement when weft-info's request file says so.
  void answer_quit();
  std::string stacks_text() const;
  std::string placement_text() const;
  // Across processes: publishes this process's state; process 0 also decides.
  void exchange(const Look& now, bool stable);
  // Prints the report and ends the process; `key` is what turns it off.
  [[noreturn]] void end_job(const std::string& report, const char* key);

  World& world_;
  Transport* transport_;
  // What the placement answer needs of the scheduler, copied once: the topology it loaded and
  // the first processing unit of each virtual processor and each NUMA node's operating-system
  // index.
  std::string topology_spec_;
  std::vector<int> vp_cpu_;
  std::vector<int> numa_os_;
  const bool report_;
  const std::int64_t timeout_ns_;
  std::string directory_;  // the job's state files, several processes only
  std::uint64_t generation_ = 0;
  std::string published_;       // what this process last wrote
  std::string previous_reads_;  // process 0: the states read last time
  int wake_pipe_[2] = {-1, -1};
  int ready_ = -1;  // the abstract socket weft-info stacks looks for
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace weft::mpi
