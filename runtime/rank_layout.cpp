#include <string>

#include "weft/bootstrap.h"
#include "weft/error.h"

namespace weft {

RankLayout::RankLayout(int world_size, int processes)
    : world_size_(world_size), processes_(processes) {
  if (processes < 1 || processes > world_size) {
    throw Error("RankLayout: " + std::to_string(processes) + " processes for " +
                std::to_string(world_size) + " ranks; expected 1 to " +
                std::to_string(world_size < 1 ? 1 : world_size) +
                " processes (each process holds at least one rank)");
  }
}

int RankLayout::first_rank(int process) const {
  if (process < 0 || process >= processes_) {
    throw Error("RankLayout::first_rank: process " + std::to_string(process) +
                " does not exist; expected 0.." + std::to_string(processes_ - 1));
  }
  const int base = world_size_ / processes_;
  const int extra = world_size_ % processes_;
  // The first `extra` processes hold one rank more.
  return process * base + (process < extra ? process : extra);
}

int RankLayout::ranks_of(int process) const {
  const int first = first_rank(process);
  return (process + 1 == processes_ ? world_size_ : first_rank(process + 1)) - first;
}

int RankLayout::process_of(int world_rank) const {
  if (world_rank < 0 || world_rank >= world_size_) {
    throw Error("RankLayout::process_of: rank " + std::to_string(world_rank) +
                " does not exist; expected 0.." + std::to_string(world_size_ - 1));
  }
  const int base = world_size_ / processes_;
  const int extra = world_size_ % processes_;
  const int in_larger = extra * (base + 1);  // ranks held by the processes with one more
  if (world_rank < in_larger) return world_rank / (base + 1);
  return extra + (world_rank - in_larger) / base;
}

}  // namespace weft
