#include <algorithm>
#include <map>
#include <sstream>

#include "weft/placement.h"

namespace weft {
namespace {

// The device names of a UCX_NET_DEVICES list, without their ports ("mlx5_0:1" names mlx5_0).
std::vector<std::string> device_names(std::string_view devices) {
  std::vector<std::string> names;
  while (!devices.empty()) {
    const std::size_t comma = devices.find(',');
    std::string_view entry = devices.substr(0, comma);
    entry = entry.substr(0, entry.find(':'));
    if (!entry.empty()) names.emplace_back(entry);
    if (comma == std::string_view::npos) break;
    devices.remove_prefix(comma + 1);
  }
  return names;
}

bool is_rdma(const Topology::Nic& nic) {
  return nic.kind == Topology::Nic::Kind::openfabrics;
}

// "mlx5_0 (node 1, 12 GB/s), eth0 (node unknown)".
std::string described(const std::vector<const Topology::Nic*>& nics) {
  std::ostringstream out;
  for (std::size_t i = 0; i < nics.size(); ++i) {
    const Topology::Nic& nic = *nics[i];
    out << (i == 0 ? "" : ", ") << nic.name << " (";
    if (nic.numa.empty()) {
      out << (nic.numa_os.empty() ? "node unknown" : "on a node this process lacks");
    } else {
      out << (nic.numa.size() == 1 ? "node " : "nodes ");
      for (std::size_t n = 0; n < nic.numa.size(); ++n) out << (n == 0 ? "" : "+") << nic.numa[n];
    }
    if (nic.link_gbytes_per_s > 0) out << ", " << nic.link_gbytes_per_s << " GB/s";
    out << ")";
  }
  return out.str();
}

}  // namespace

NicPlacement place_near_nics(const std::vector<Topology::Nic>& nics, std::string_view devices) {
  NicPlacement placement;
  std::vector<const Topology::Nic*> candidates;
  const bool every_device = devices.empty() || devices == "all";
  const std::vector<std::string> wanted = device_names(devices);
  for (const Topology::Nic& nic : nics) {
    if (every_device || std::find(wanted.begin(), wanted.end(), nic.name) != wanted.end()) {
      candidates.push_back(&nic);
    }
  }
  if (std::any_of(candidates.begin(), candidates.end(), [](auto* nic) { return is_rdma(*nic); })) {
    std::erase_if(candidates, [](auto* nic) { return !is_rdma(*nic); });
  }
  if (candidates.empty()) {
    placement.reason =
        every_device ? "no network interface found: no binding"
                     : "none of the interfaces '" + std::string(devices) + "' found: no binding";
    return placement;
  }
  std::map<int, double> weight;
  for (const Topology::Nic* nic : candidates) {
    placement.nics.push_back(nic->name);
    if (nic->numa.empty()) continue;
    const double bandwidth = nic->link_gbytes_per_s > 0 ? nic->link_gbytes_per_s : 1.0;
    for (int node : nic->numa) weight[node] += bandwidth / static_cast<double>(nic->numa.size());
  }
  std::ostringstream reason;
  if (weight.empty()) {
    reason << "no NUMA node of this process is known to hold "
           << (candidates.size() == 1 ? "interface " : "interfaces ") << described(candidates)
           << ": no binding";
    placement.reason = reason.str();
    return placement;
  }
  double heaviest = 0;
  for (const auto& [node, bandwidth] : weight) heaviest = std::max(heaviest, bandwidth);
  for (const auto& [node, bandwidth] : weight) {
    if (bandwidth >= heaviest) placement.numa.push_back(node);
  }
  reason << "near " << (placement.numa.size() == 1 ? "NUMA node " : "NUMA nodes ");
  for (std::size_t i = 0; i < placement.numa.size(); ++i) {
    reason << (i == 0 ? "" : ", ") << placement.numa[i];
  }
  reason << ", weighing " << (is_rdma(*candidates.front()) ? "RDMA " : "network ")
         << (candidates.size() == 1 ? "interface " : "interfaces ") << described(candidates);
  placement.reason = reason.str();
  return placement;
}

}  // namespace weft
