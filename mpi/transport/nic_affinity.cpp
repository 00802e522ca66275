#include "transport/nic_affinity.h"

#include <cstdlib>

#include "weft/topology.h"

namespace weft::mpi {

NicAffinity nic_affinity(const Scheduler& scheduler) {
  NicAffinity affinity;
  const char* devices = std::getenv("UCX_NET_DEVICES");
  const bool named = devices != nullptr && *devices != '\0';
  if (!named && std::getenv("PMIX_RANK") == nullptr) {
    affinity.placement.reason = "every process of the job is on this host: no network interface";
    return affinity;
  }
  const weft::Topology& topology = scheduler.topology();
  affinity.placement = place_near_nics(topology.nics(), named ? devices : "");
  const int vps = scheduler.num_vps();
  for (int node : affinity.placement.numa) {
    for (int core : topology.cores_of_numa(node)) {
      if (core < vps) affinity.near_vps.push_back(core);  // virtual processor i runs on core i
    }
  }
  if (static_cast<int>(affinity.near_vps.size()) == vps) affinity.near_vps.clear();
  return affinity;
}

NicMemoryScope::NicMemoryScope(const weft::Topology& topology, const NicAffinity& affinity)
    : topology_(topology) {
  if (!affinity.placement.numa.empty()) {
    bound_ = topology_.bind_current_thread_memory(affinity.placement.numa);
  }
}

NicMemoryScope::~NicMemoryScope() {
  if (!bound_) return;
  try {
    topology_.bind_current_thread_memory({});
  } catch (...) {
    // The thread keeps the binding: its later allocations land near the interface, which is
    // slower for nothing but not wrong.
  }
}

}  // namespace weft::mpi
