// The package (socket) of each core of a topology, for drawings of the machine (weft-info
// placement --svg).
#pragma once

#include <vector>

#include "weft/topology.h"

namespace weft {

// The logical index of the package of each core, by core index. Throws weft::Error when hwloc
// cannot load the topology's source again.
std::vector<int> core_packages(const Topology& topology);

}  // namespace weft
