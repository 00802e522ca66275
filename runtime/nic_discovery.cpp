#include "nic_discovery.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "weft/error.h"

namespace weft::detail {
namespace {

// The NUMA nodes below `object`'s nearest non-I/O ancestor: where the device's DMA lands fastest.
// Nothing when that ancestor is the whole machine of a host with several nodes: the machine did
// not say where the device is, and guessing would bind for no reason (notes/seeds.md, 004).
std::vector<int> local_numa_os(hwloc_topology_t topology, hwloc_obj_t object) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, object);
  std::vector<int> nodes;
  if (ancestor == nullptr || ancestor->nodeset == nullptr) return nodes;
  const bool several_nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) > 1;
  if (several_nodes && ancestor->type == HWLOC_OBJ_MACHINE) return nodes;
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr);
       node != nullptr; node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    if (hwloc_bitmap_isset(ancestor->nodeset, node->os_index)) {
      nodes.push_back(static_cast<int>(node->os_index));
    }
  }
  return nodes;
}

double link_speed(hwloc_obj_t object) {
  for (hwloc_obj_t up = object->parent; up != nullptr; up = up->parent) {
    if (up->type == HWLOC_OBJ_PCI_DEVICE) return up->attr->pcidev.linkspeed;
  }
  return 0;
}

}  // namespace

std::vector<Topology::Nic> read_nics(hwloc_topology_t topology,
                                     const std::vector<int>& numa_os_index) {
  if (hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0 ||
      hwloc_topology_load(topology) != 0) {
    throw Error(std::string("hwloc could not read the I/O devices (network interfaces): ") +
                std::strerror(errno));
  }
  std::vector<Topology::Nic> nics;
  for (hwloc_obj_t device = hwloc_get_next_osdev(topology, nullptr); device != nullptr;
       device = hwloc_get_next_osdev(topology, device)) {
    const hwloc_obj_osdev_type_t type = device->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
    Topology::Nic nic;
    nic.name = device->name != nullptr ? device->name : "";
    nic.kind = type == HWLOC_OBJ_OSDEV_OPENFABRICS ? Topology::Nic::Kind::openfabrics
                                                   : Topology::Nic::Kind::network;
    nic.numa_os = local_numa_os(topology, device);
    for (int os : nic.numa_os) {
      auto found = std::find(numa_os_index.begin(), numa_os_index.end(), os);
      if (found != numa_os_index.end()) {
        nic.numa.push_back(static_cast<int>(found - numa_os_index.begin()));
      }
    }
    nic.link_gbytes_per_s = link_speed(device);
    nics.push_back(std::move(nic));
  }
  return nics;
}

}  // namespace weft::detail
