// Knowing at once that a peer process of the job has gone. UCX between processes of one machine
// runs over shared memory, whose transports (UCX 1.13's posix and sysv) cannot report a peer's
// failure: a send into a dead peer's queue succeeds, a receive from it waits forever, and only a
// CMA read of its memory fails, fatally (docs/mpi-processes.md, "When a process dies"). So each
// process publishes its pid and where it runs; a peer on the same machine and in the same pid
// namespace is watched through a pidfd, which becomes readable when it ends, whatever ended it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "weft/bootstrap.h"

namespace weft::mpi {

class PeerWatch {
 public:
  // Publishes this process's identity through `bootstrap`, before the job's fence.
  explicit PeerWatch(Bootstrap& bootstrap);
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // After the fence: reads the peers' identities and watches those of this machine from a kernel
  // thread of its own, which calls lost(process) when one ends (lost does not return: it ends
  // this process). Throws weft::Error when a descriptor or the thread cannot be made.
  void start(Bootstrap& bootstrap, std::function<void(int process)> lost);
  // Stops watching: before the job's closing fence, after which peers end as they should.
  void stop();

  // Whether `process` runs on this machine (the same boot), known once started.
  bool same_machine(int process) const;
  // The peer process whose pid on this machine is `pid`, or -1.
  int process_of_pid(pid_t pid) const;

 private:
  struct Peer {
    pid_t pid = -1;
    bool same_machine = false;
    int pidfd = -1;  // watched while >= 0
  };
  int self_;
  std::vector<Peer> peers_;
  int stop_fd_ = -1;  // an eventfd written by stop()
  std::thread watcher_;
};

// "process 1 (ranks 4-7)"
std::string process_label(const RankLayout& layout, int process);

}  // namespace weft::mpi
