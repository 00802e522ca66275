// Reading network interfaces from hwloc's I/O objects, kept apart from the rest of the topology
// because it costs a second discovery (weft/topology.h, Topology::nics).
#pragma once

#include <hwloc.h>

#include <vector>

#include "weft/topology.h"

namespace weft::detail {

// Loads `topology`, initialized and pointed at its source but not loaded yet, with its important
// I/O devices, and returns its network and OpenFabrics devices. `numa_os_index` maps the logical
// NUMA nodes of the topology the devices are reported for to operating-system indices.
std::vector<Topology::Nic> read_nics(hwloc_topology_t topology,
                                     const std::vector<int>& numa_os_index);

}  // namespace weft::detail
