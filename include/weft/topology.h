// The machine weft runs on, as hwloc sees it: processing units, cores, NUMA nodes and the
// distances between nodes. A topology can also be synthetic or read from XML, for tests and
// what-if studies; binding threads is then a no-op, since those cores are not this machine's.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

class Topology {
 public:
  struct Core {
    int index;             // hwloc logical index, 0..num_cores()-1
    int os_index;          // operating-system index of the core
    int numa;              // logical index of its NUMA node
    std::vector<int> pus;  // operating-system indices of its processing units
  };

  // A network interface: one of hwloc's network or OpenFabrics operating-system devices.
  struct Nic {
    enum class Kind { network, openfabrics };
    std::string name;  // as the system names it: "eth0", "mlx5_0"
    Kind kind;
    // Operating-system indices of the NUMA nodes it is attached to; empty when the machine does
    // not say (the device hangs below the whole machine of a host with several nodes).
    std::vector<int> numa_os;
    // The same nodes as logical indices of this topology, leaving out those it lacks (a topology
    // restricted to some cpus keeps only their nodes).
    std::vector<int> numa;
    double link_gbytes_per_s;  // of its PCI link; 0 when unknown
  };

  // "" or "host": this machine. "synthetic:<hwloc synthetic description>", for instance
  // "synthetic:pack:2 [numa] core:4 pu:1". "xml:<path>" for an exported hwloc topology.
  // Throws weft::Error naming the spec and what is expected when it cannot be loaded.
  static Topology load(std::string_view spec);
  // The same, keeping only the processing units of `cpus`, a cpu list of operating-system indices
  // ("0-3,8", see weft/cpu_list.h; scheduler.cores): cores and NUMA nodes left without any are
  // removed, and the others are numbered from 0 again. Empty keeps everything. Throws weft::Error
  // when the list is malformed or names a processing unit the topology lacks.
  static Topology load(std::string_view spec, std::string_view cpus);

  // True only for the topology of the machine this process runs on.
  bool is_this_machine() const;
  const std::string& spec() const;
  // The cpu list it was restricted to; empty when it was not.
  const std::string& cpus() const;

  int num_pus() const;
  int num_cores() const;
  int num_numa_nodes() const;
  const std::vector<Core>& cores() const;
  const Core& core(int index) const;
  std::vector<int> cores_of_numa(int node) const;
  // Operating-system index of a NUMA node, as mbind and libnuma name it.
  int numa_os_index(int node) const;

  // The machine's network interfaces, read at the first call: reading I/O devices doubles hwloc's
  // discovery time (25 ms more on a small machine), which only processes that talk to other
  // hosts, and weft-info, need. From an XML topology, the devices it holds; none for a synthetic
  // one.
  const std::vector<Nic>& nics() const;

  // Relative distance between two NUMA nodes, 10 meaning local (ACPI SLIT convention). Taken
  // from hwloc when the machine reports distances, else 10 on the node and 20 elsewhere.
  int distance(int numa_a, int numa_b) const;
  // NUMA nodes sorted by increasing distance from `node`, `node` first.
  std::vector<int> numa_by_distance(int node) const;

  // Binds the calling kernel thread to the processing units of `core`. Returns false, doing
  // nothing, when the topology is not this machine's; throws weft::Error if hwloc refuses.
  bool bind_current_thread(int core) const;

  // Binds the memory the calling kernel thread allocates from now on to the NUMA nodes `numa`
  // (logical indices), or back to the system's default policy when `numa` is empty. Returns false,
  // doing nothing, when the topology is not this machine's; throws weft::Error if hwloc refuses.
  bool bind_current_thread_memory(const std::vector<int>& numa) const;

  // Binds the pages of [address, address + bytes) to NUMA node `numa` (logical index), moving
  // those already touched. Returns false, doing nothing, when the topology is not this machine's
  // or has one node; throws weft::Error if hwloc refuses.
  bool bind_memory(void* address, std::size_t bytes, int numa) const;

  // One human-readable paragraph: packages, NUMA nodes, cores and PUs.
  std::string summary() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace weft
