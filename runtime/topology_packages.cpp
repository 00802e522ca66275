#include "weft/topology_packages.h"

#include <hwloc.h>

#include <memory>
#include <string>

#include "weft/error.h"

namespace weft {

std::vector<int> core_packages(const Topology& topology) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw Error("hwloc_topology_init failed");
  const std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> handle(raw,
                                                                           hwloc_topology_destroy);
  // The topology was loaded from this spec once already: only its source is set here again.
  const std::string& spec = topology.spec();
  if (spec.starts_with("synthetic:")) {
    hwloc_topology_set_synthetic(raw, spec.substr(10).c_str());
  } else if (spec.starts_with("xml:")) {
    hwloc_topology_set_xml(raw, spec.substr(4).c_str());
  }
  if (hwloc_topology_load(raw) != 0) throw Error("hwloc cannot load topology '" + spec + "'");
  std::vector<int> packages;
  for (const Topology::Core& core : topology.cores()) {
    int package = 0;
    if (!core.pus.empty()) {
      hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(raw, static_cast<unsigned>(core.pus.front()));
      hwloc_obj_t ancestor =
          pu != nullptr ? hwloc_get_ancestor_obj_by_type(raw, HWLOC_OBJ_PACKAGE, pu) : nullptr;
      if (ancestor != nullptr) package = static_cast<int>(ancestor->logical_index);
    }
    packages.push_back(package);
  }
  return packages;
}

}  // namespace weft
