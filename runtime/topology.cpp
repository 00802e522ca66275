#include "weft/topology.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <utility>

#include "nic_discovery.h"
#include "weft/cpu_list.h"
#include "weft/error.h"

namespace weft {
namespace {

constexpr std::string_view kSyntheticPrefix = "synthetic:";
constexpr std::string_view kXmlPrefix = "xml:";
constexpr std::string_view kSyntheticExample = "synthetic:pack:2 [numa] core:4 pu:1";
constexpr int kLocalDistance = 10;
constexpr int kRemoteDistance = 20;

using TopologyHandle = std::shared_ptr<hwloc_topology>;

TopologyHandle make_handle() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    throw Error(std::string("hwloc_topology_init failed: ") + std::strerror(errno));
  }
  return TopologyHandle(raw, hwloc_topology_destroy);
}

std::string quoted(std::string_view spec) {
  return "topology '" + std::string(spec) + "'";
}

// Points the not yet loaded `topology` at the source `spec` names. Returns whether the spec
// means this machine.
bool select_source(hwloc_topology_t topology, std::string_view spec) {
  if (spec.empty() || spec == "host") return true;
  if (spec.starts_with(kSyntheticPrefix)) {
    std::string description(spec.substr(kSyntheticPrefix.size()));
    if (hwloc_topology_set_synthetic(topology, description.c_str()) != 0) {
      throw Error(quoted(spec) + " is not a valid hwloc synthetic description ('" + description +
                  "' was refused by hwloc); expected e.g. '" + std::string(kSyntheticExample) +
                  "'");
    }
    return false;
  }
  if (spec.starts_with(kXmlPrefix)) {
    std::string path(spec.substr(kXmlPrefix.size()));
    if (hwloc_topology_set_xml(topology, path.c_str()) != 0) {
      throw Error(quoted(spec) + " could not be read (" + std::strerror(errno) +
                  "); expected 'xml:<path>' of a topology exported by hwloc, e.g. with "
                  "'lstopo topology.xml'");
    }
    return false;
  }
  throw Error(quoted(spec) + " is not understood; expected '' or 'host' for this machine, '" +
              std::string(kSyntheticPrefix) + "<hwloc synthetic description>' (e.g. '" +
              std::string(kSyntheticExample) + "') or '" + std::string(kXmlPrefix) +
              "<path of an hwloc XML export>'");
}

// Keeps the processing units of the cpu list `cpus` only.
void restrict_to(hwloc_topology_t topology, std::string_view spec, std::string_view cpus) {
  const std::vector<int> wanted = parse_cpu_list(cpus);
  // The empty spec is this machine; its name is clearer in a message.
  const std::string name = quoted(spec.empty() ? "host" : spec);
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> set(hwloc_bitmap_alloc(),
                                                                hwloc_bitmap_free);
  for (int cpu : wanted) {
    if (hwloc_get_pu_obj_by_os_index(topology, static_cast<unsigned>(cpu)) == nullptr) {
      std::vector<int> present;
      for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, nullptr);
           pu != nullptr; pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, pu)) {
        present.push_back(static_cast<int>(pu->os_index));
      }
      std::sort(present.begin(), present.end());
      throw Error("cpu list '" + std::string(cpus) + "' names processing unit " +
                  std::to_string(cpu) + ", which " + name +
                  " lacks; expected processing units of " + format_cpu_list(present));
    }
    hwloc_bitmap_set(set.get(), static_cast<unsigned>(cpu));
  }
  if (hwloc_topology_restrict(topology, set.get(), HWLOC_RESTRICT_FLAG_REMOVE_CPULESS) != 0) {
    throw Error("hwloc_topology_restrict to cpu list '" + std::string(cpus) + "' of " + name +
                " failed: " + std::strerror(errno));
  }
}

int count_of(hwloc_topology_t topology, hwloc_obj_type_t type) {
  return std::max(0, hwloc_get_nbobjs_by_type(topology, type));
}

// Logical index of the first NUMA node whose cpuset holds all of `core`. Memory-only nodes
// (HBM, CXL) share the cpuset of a DRAM node listed before them, so the DRAM node wins.
int numa_of(hwloc_topology_t topology, hwloc_obj_t core) {
  for (int i = 0; i < count_of(topology, HWLOC_OBJ_NUMANODE); ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, i);
    if (hwloc_bitmap_isincluded(core->cpuset, node->cpuset)) return i;
  }
  return 0;
}

std::vector<Topology::Core> read_cores(hwloc_topology_t topology) {
  std::vector<Topology::Core> cores;
  for (int i = 0; i < count_of(topology, HWLOC_OBJ_CORE); ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, i);
    cores.push_back({i, static_cast<int>(core->os_index), numa_of(topology, core), {}});
  }
  for (int i = 0; i < count_of(topology, HWLOC_OBJ_PU); ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, i);
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, pu);
    if (core != nullptr) cores[core->logical_index].pus.push_back(static_cast<int>(pu->os_index));
  }
  return cores;
}

using DistanceMatrix = std::vector<std::vector<int>>;

struct DistancesRelease {
  hwloc_topology_t topology;
  void operator()(hwloc_distances_s* distances) const {
    hwloc_distances_release(topology, distances);
  }
};

DistanceMatrix default_distances(int nodes) {
  DistanceMatrix matrix(nodes, std::vector<int>(nodes, kRemoteDistance));
  for (int i = 0; i < nodes; ++i) matrix[i][i] = kLocalDistance;
  return matrix;
}

// hwloc's NUMA latency matrix rescaled so that the smallest local value reads 10, the SLIT
// convention the rest of weft reasons in. Returns nothing when hwloc has no usable matrix.
std::optional<DistanceMatrix> hwloc_distances(hwloc_topology_t topology, int nodes) {
  hwloc_distances_s* found = nullptr;
  unsigned count = 1;
  if (hwloc_distances_get_by_type(topology, HWLOC_OBJ_NUMANODE, &count, &found,
                                  HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
      count == 0 || found == nullptr) {
    return std::nullopt;
  }
  std::unique_ptr<hwloc_distances_s, DistancesRelease> distances(found, {topology});
  const unsigned n = distances->nbobjs;
  if (static_cast<int>(n) != nodes) return std::nullopt;
  hwloc_uint64_t unit = 0;
  for (unsigned i = 0; i < n; ++i) {
    hwloc_uint64_t local = distances->values[i * n + i];
    if (local == 0) return std::nullopt;
    unit = unit == 0 ? local : std::min(unit, local);
  }
  DistanceMatrix matrix(nodes, std::vector<int>(nodes));
  for (unsigned i = 0; i < n; ++i) {
    for (unsigned j = 0; j < n; ++j) {
      double value = static_cast<double>(distances->values[i * n + j]) * kLocalDistance /
                     static_cast<double>(unit);
      matrix[distances->objs[i]->logical_index][distances->objs[j]->logical_index] =
          static_cast<int>(std::lround(value));
    }
  }
  return matrix;
}

std::string plural(int count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

std::string memory_size(hwloc_uint64_t bytes) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::ostringstream out;
  out.precision(bytes >= 10 * kGiB ? 0 : 1);
  out << std::fixed << static_cast<double>(bytes) / kGiB << " GiB";
  return out.str();
}

}  // namespace

struct Topology::Impl {
  std::string spec;
  std::string cpus;
  TopologyHandle handle;
  bool this_machine = false;
  int num_pus = 0;
  int num_packages = 0;
  int num_numa_nodes = 0;
  std::vector<int> numa_os_index;
  std::vector<Core> cores;
  DistanceMatrix distances;
  bool distances_from_hwloc = false;
  std::string cpu_model;
  mutable std::once_flag nics_read;
  mutable std::vector<Nic> nics;
};

Topology Topology::load(std::string_view spec) {
  return load(spec, "");
}

Topology Topology::load(std::string_view spec, std::string_view cpus) {
  auto impl = std::make_shared<Impl>();
  impl->spec = std::string(spec);
  impl->cpus = std::string(cpus);
  impl->handle = make_handle();
  hwloc_topology_t topology = impl->handle.get();
  bool host = select_source(topology, spec);
  if (hwloc_topology_load(topology) != 0) {
    throw Error(quoted(spec) + " could not be loaded by hwloc (" + std::strerror(errno) +
                "); expected a readable " +
                (host                           ? "machine"
                 : spec.starts_with(kXmlPrefix) ? "hwloc XML export"
                                                : "synthetic description"));
  }
  if (!cpus.empty()) restrict_to(topology, spec, cpus);
  impl->this_machine = host && hwloc_topology_is_thissystem(topology);
  impl->cores = read_cores(topology);
  if (impl->cores.empty()) {
    throw Error(quoted(spec) + " has no core level; expected a topology with cores, e.g. '" +
                std::string(kSyntheticExample) + "'");
  }
  impl->num_pus = count_of(topology, HWLOC_OBJ_PU);
  impl->num_packages = count_of(topology, HWLOC_OBJ_PACKAGE);
  impl->num_numa_nodes = std::max(1, count_of(topology, HWLOC_OBJ_NUMANODE));
  for (int n = 0; n < impl->num_numa_nodes; ++n) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, n);
    impl->numa_os_index.push_back(node != nullptr ? static_cast<int>(node->os_index) : n);
  }
  if (auto from_hwloc = hwloc_distances(topology, impl->num_numa_nodes)) {
    impl->distances = std::move(*from_hwloc);
    impl->distances_from_hwloc = true;
  } else {
    impl->distances = default_distances(impl->num_numa_nodes);
  }
  if (impl->num_packages > 0) {
    hwloc_obj_t package = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0);
    if (const char* model = hwloc_obj_get_info_by_name(package, "CPUModel")) {
      // Firmware pads the model name with spaces.
      impl->cpu_model = model;
      impl->cpu_model.erase(impl->cpu_model.find_last_not_of(' ') + 1);
    }
  }
  Topology result;
  result.impl_ = std::move(impl);
  return result;
}

bool Topology::is_this_machine() const {
  return impl_->this_machine;
}
const std::string& Topology::spec() const {
  return impl_->spec;
}
const std::string& Topology::cpus() const {
  return impl_->cpus;
}
int Topology::num_pus() const {
  return impl_->num_pus;
}
int Topology::num_cores() const {
  return static_cast<int>(impl_->cores.size());
}
int Topology::num_numa_nodes() const {
  return impl_->num_numa_nodes;
}
int Topology::numa_os_index(int node) const {
  if (node < 0 || node >= num_numa_nodes()) {
    throw Error("Topology::numa_os_index: NUMA node " + std::to_string(node) +
                " does not exist; expected 0.." + std::to_string(num_numa_nodes() - 1) + " on " +
                quoted(impl_->spec));
  }
  return impl_->numa_os_index[node];
}
const std::vector<Topology::Core>& Topology::cores() const {
  return impl_->cores;
}

const Topology::Core& Topology::core(int index) const {
  if (index < 0 || index >= num_cores()) {
    throw Error("Topology::core: core " + std::to_string(index) + " does not exist; expected 0.." +
                std::to_string(num_cores() - 1) + " on " + quoted(impl_->spec));
  }
  return impl_->cores[index];
}

std::vector<int> Topology::cores_of_numa(int node) const {
  std::vector<int> result;
  for (const Core& core : impl_->cores) {
    if (core.numa == node) result.push_back(core.index);
  }
  return result;
}

int Topology::distance(int numa_a, int numa_b) const {
  for (int node : {numa_a, numa_b}) {
    if (node < 0 || node >= num_numa_nodes()) {
      throw Error("Topology::distance: NUMA node " + std::to_string(node) +
                  " does not exist; expected 0.." + std::to_string(num_numa_nodes() - 1) + " on " +
                  quoted(impl_->spec));
    }
  }
  return impl_->distances[numa_a][numa_b];
}

std::vector<int> Topology::numa_by_distance(int node) const {
  distance(node, node);  // validates `node`
  std::vector<int> order(num_numa_nodes());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    // The node itself first even when a matrix reports another node as close.
    if ((a == node) != (b == node)) return a == node;
    return distance(node, a) < distance(node, b);
  });
  return order;
}

const std::vector<Topology::Nic>& Topology::nics() const {
  const Impl& impl = *impl_;
  std::call_once(impl.nics_read, [&impl] {
    // A synthetic description has no devices to read.
    if (impl.spec.starts_with(kSyntheticPrefix)) return;
    TopologyHandle handle = make_handle();
    select_source(handle.get(), impl.spec);
    impl.nics = detail::read_nics(handle.get(), impl.numa_os_index);
  });
  return impl.nics;
}

bool Topology::bind_current_thread_memory(const std::vector<int>& numa) const {
  if (!impl_->this_machine) return false;
  hwloc_topology_t topology = impl_->handle.get();
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> nodes(hwloc_bitmap_alloc(),
                                                                  hwloc_bitmap_free);
  int result = 0;
  if (numa.empty()) {
    hwloc_bitmap_copy(nodes.get(), hwloc_topology_get_topology_nodeset(topology));
    result = hwloc_set_membind(topology, nodes.get(), HWLOC_MEMBIND_DEFAULT,
                               HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET);
  } else {
    for (int node : numa) hwloc_bitmap_set(nodes.get(), static_cast<unsigned>(numa_os_index(node)));
    result = hwloc_set_membind(topology, nodes.get(), HWLOC_MEMBIND_BIND,
                               HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET);
  }
  if (result != 0) {
    throw Error(
        "Topology::bind_current_thread_memory: hwloc could not bind the calling thread's "
        "memory to NUMA nodes " +
        format_cpu_list(numa) + " (" + std::strerror(errno) + ")");
  }
  return true;
}

bool Topology::bind_memory(void* address, std::size_t bytes, int numa) const {
  if (!impl_->this_machine || impl_->num_numa_nodes < 2 || bytes == 0) return false;
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> nodes(hwloc_bitmap_alloc(),
                                                                  hwloc_bitmap_free);
  hwloc_bitmap_set(nodes.get(), static_cast<unsigned>(numa_os_index(numa)));
  if (hwloc_set_area_membind(impl_->handle.get(), address, bytes, nodes.get(), HWLOC_MEMBIND_BIND,
                             HWLOC_MEMBIND_MIGRATE | HWLOC_MEMBIND_BYNODESET) != 0) {
    throw Error("Topology::bind_memory: hwloc could not bind " + std::to_string(bytes) +
                " bytes to NUMA node " + std::to_string(numa) + " (" + std::strerror(errno) + ")");
  }
  return true;
}

bool Topology::bind_current_thread(int core_index) const {
  const Core& target = core(core_index);
  if (!impl_->this_machine) return false;
  hwloc_obj_t object = hwloc_get_obj_by_type(impl_->handle.get(), HWLOC_OBJ_CORE, target.index);
  if (hwloc_set_cpubind(impl_->handle.get(), object->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
    throw Error("Topology::bind_current_thread: hwloc could not bind the calling thread to core " +
                std::to_string(core_index) + " (" + std::strerror(errno) + ")");
  }
  return true;
}

std::string Topology::summary() const {
  const Impl& impl = *impl_;
  std::ostringstream out;
  out << "Topology '" << (impl.spec.empty() ? "host" : impl.spec) << "'"
      << (impl.this_machine ? " (this machine)" : " (not this machine: binding is disabled)")
      << (impl.cpus.empty() ? "" : " restricted to cpus " + impl.cpus) << ": "
      << plural(impl.num_packages, "package") << ", " << plural(impl.num_numa_nodes, "NUMA node")
      << ", " << plural(num_cores(), "core") << ", " << plural(impl.num_pus, "processing unit");
  if (impl.num_pus % num_cores() == 0) out << " (" << impl.num_pus / num_cores() << " per core)";
  out << ".";
  if (!impl.cpu_model.empty()) out << " CPU: " << impl.cpu_model << ".";
  for (int node = 0; node < impl.num_numa_nodes; ++node) {
    std::vector<int> cores = cores_of_numa(node);
    out << " NUMA node " << node << ": "
        << (cores.empty() ? "no cores"
                          : (cores.size() == 1 ? "core " : "cores ") + format_cpu_list(cores));
    hwloc_obj_t object = hwloc_get_obj_by_type(impl.handle.get(), HWLOC_OBJ_NUMANODE, node);
    if (object != nullptr && object->attr->numanode.local_memory > 0) {
      out << ", " << memory_size(object->attr->numanode.local_memory);
    }
    out << ".";
  }
  if (impl.num_numa_nodes > 1) {
    out << " Distances (10 = local) "
        << (impl.distances_from_hwloc ? "reported by the machine:"
                                      : "not reported, assumed 10 local and 20 remote:");
    for (int a = 0; a < impl.num_numa_nodes; ++a) {
      out << (a == 0 ? " [" : "; ");
      for (int b = 0; b < impl.num_numa_nodes; ++b) out << (b == 0 ? "" : " ") << distance(a, b);
    }
    out << "].";
  }
  return out.str();
}

}  // namespace weft
