// The processes of one job and the key-value exchange they start with. A job may span several
// processes (weftrun -p, or a PMIx launcher such as Open MPI's mpirun or Slurm's srun); each holds
// a contiguous block of world ranks. Before ranks can reach each other, every process publishes
// what its peers need (its transport address), waits at a fence, then reads theirs.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace weft {

// Which world ranks each process holds: contiguous blocks in process order, the remainder of
// size / processes going one each to the first processes (weftrun -p 3 -n 8: 3, 3, 2).
class RankLayout {
 public:
  // Requires 1 <= processes <= world_size.
  RankLayout(int world_size, int processes);

  int world_size() const { return world_size_; }
  int processes() const { return processes_; }
  int first_rank(int process) const;
  int ranks_of(int process) const;
  int process_of(int world_rank) const;

 private:
  int world_size_;
  int processes_;
};

// One process's end of the job's exchange. Not thread-safe: the process's bootstrap runs on one
// thread before its ranks start (and at the end of the job, after they have stopped).
class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  // This process's index among the job's processes, from 0.
  virtual int process() const = 0;
  virtual const RankLayout& layout() const = 0;

  // Publishes `value` (any bytes) under `key`; other processes read it after the next fence.
  virtual void put(std::string_view key, std::string_view value) = 0;
  // Returns once every process of the job has reached the same fence; all values put before it
  // are then readable. Throws weft::Error when a peer is gone or the exchange is garbled.
  virtual void fence() = 0;
  // What `process` put under `key` before the last fence. Throws weft::Error naming the key and
  // the process when there is none.
  virtual std::string get(int process, std::string_view key) = 0;
};

// The bootstrap of this process: weftrun's when it started the process as one of several
// (weftrun -p), PMIx's when a PMIx launcher did (PMIX_RANK in the environment), else nullptr: a
// job of a single process, whose ranks are all local. `ranks` is mpi.ranks: weftrun passes the
// job's whole size in it; under PMIx every process holds that many ranks (1 unless set). Throws weft::Error with the reason (bad token, unreachable
// launcher, a PMIx call that failed and its status).
std::unique_ptr<Bootstrap> connect_bootstrap(int ranks);

}  // namespace weft
