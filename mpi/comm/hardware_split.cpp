// Where a rank sits: its virtual processor's core and that core's NUMA node, by the operating
// system's indices, so that ranks of different processes compare (a job's processes run on one
// node; each may see a restricted topology numbered from 0). The levels, from the widest: the
// node (MPI's "mpi_shared_memory": every rank of a weft job), the NUMA node, the core.
#include "comm/hardware_split.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "comm/communicator.h"
#include "info/info.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/topology.h"

namespace weft::mpi {

namespace {

enum Level { kNode = 0, kNuma = 1, kCore = 2 };

// The caller's resource at each level; colors keep the level apart.
std::array<int, 3> place_of_caller() {
  const Scheduler* scheduler = Scheduler::current();
  const int vp = this_thread::vp();
  if (scheduler == nullptr || vp < 0) return {0, 0, 0};
  const weft::Topology& topology = scheduler->topology();
  return {0, topology.numa_os_index(scheduler->vp_numa(vp)),
          topology.core(scheduler->vp_core(vp)).os_index};
}

// The names MPI_Comm_split_type reports for its levels (MPI-4.1 and hwloc's object names).
constexpr const char* kLevelNames[] = {"mpi_shared_memory", "NUMANode", "Core"};

int color_of(Level level, int resource) {
  return (static_cast<int>(level) << 24) | resource;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The level a "mpi_hw_resource_type" value names (without case), or -1 when weft does not know it.
int level_named(const std::string& value) {
  const std::string name = lower(value);
  if (name == "mpi_shared_memory" || name == "machine" || name == "hwloc://machine") return kNode;
  if (name == "numanode" || name == "numa" || name == "hwloc://numanode") return kNuma;
  if (name == "core" || name == "hwloc://core") return kCore;
  return -1;
}

}  // namespace

int hardware_color(MPI_Comm comm, int split_type, MPI_Info info, int* color, std::string* problem) {
  const std::array<int, 3> mine = place_of_caller();
  if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
    const std::string* value = nullptr;
    if (info != MPI_INFO_NULL) {
      for (const auto& [key, v] : info->entries) {
        if (key == "mpi_hw_resource_type") value = &v;
      }
    }
    // MPI-4.1: without the key, or with a resource type the implementation does not know, the
    // caller gets MPI_COMM_NULL.
    const int level = value == nullptr ? -1 : level_named(*value);
    *color = level < 0 ? MPI_UNDEFINED : color_of(static_cast<Level>(level), mine[level]);
    return MPI_SUCCESS;
  }
  // Unguided: the widest level whose group of the caller is strictly smaller than comm's.
  const int size = comm->size();
  std::vector<int> places(3 * static_cast<std::size_t>(size));
  if (int rc = PMPI_Allgather(mine.data(), 3, MPI_INT, places.data(), 3, MPI_INT, comm);
      rc != MPI_SUCCESS) {
    *problem = "the exchange of the members' places failed";
    return rc;
  }
  *color = MPI_UNDEFINED;
  for (const int level : {kNode, kNuma, kCore}) {
    int together = 0;
    for (int r = 0; r < size; ++r) together += places[3 * r + level] == mine[level] ? 1 : 0;
    if (together < size) {
      *color = color_of(static_cast<Level>(level), mine[level]);
      // MPI-4.1: the info argument says which resource type the new communicator stands for.
      if (info != MPI_INFO_NULL && info != MPI_INFO_ENV) {
        auto& entries = info->entries;
        std::erase_if(entries,
                      [](const auto& entry) { return entry.first == "mpi_hw_resource_type"; });
        entries.emplace_back("mpi_hw_resource_type", kLevelNames[level]);
      }
      break;
    }
  }
  return MPI_SUCCESS;
}

}  // namespace weft::mpi
