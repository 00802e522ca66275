// Where a process's UCX traffic is handled (notes/seeds.md, 004): near the network interfaces
// UCX uses, since incoming data lands in the memory of the node the polling thread touches.
#pragma once

#include <optional>
#include <vector>

#include "weft/placement.h"
#include "weft/scheduler.h"

namespace weft::mpi {

struct NicAffinity {
  NicPlacement placement;
  // Virtual processors on the chosen nodes, for SourceSpec::near_vps; empty when that is all of
  // them or when nothing is chosen.
  std::vector<int> near_vps;
};

// This process's choice. The interfaces are read only where the job may reach other hosts: under
// a PMIx launcher, or when UCX_NET_DEVICES names devices. weftrun -p keeps every process on this
// host, where UCX talks through shared memory and no interface is involved.
NicAffinity nic_affinity(const Scheduler& scheduler);

// While it lives, what the calling kernel thread allocates goes to the chosen nodes: UCX's
// context and worker are made under it, so their pools start near the interface.
class NicMemoryScope {
 public:
  NicMemoryScope(const weft::Topology& topology, const NicAffinity& affinity);
  ~NicMemoryScope();
  NicMemoryScope(const NicMemoryScope&) = delete;
  NicMemoryScope& operator=(const NicMemoryScope&) = delete;

 private:
  const weft::Topology& topology_;
  bool bound_ = false;
};

}  // namespace weft::mpi
