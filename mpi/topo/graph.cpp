// Graph topologies (MPI-4.1 8.5.3, 8.5.5, 8.5.7) and MPI_Topo_test. A graph is described whole
// by every member, so each keeps the whole of it.
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "topo/topology.h"
#include "topo/topology_comm.h"
#include "util/profiling.h"

namespace {

using weft::mpi::check_topology;
using weft::mpi::raise;
using weft::mpi::Topology;

int null_argument(MPI_Comm comm, std::string_view function, std::string_view argument,
                  std::string_view expected) {
  return raise(comm, function, MPI_ERR_ARG,
               std::string(argument) + " = NULL, expected " + std::string(expected));
}

// The checks of a graph's description shared by MPI_Graph_create and MPI_Graph_map.
int check_graph(MPI_Comm comm, std::string_view function, int nnodes, const int index[],
                const int edges[]) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_intra(comm, function); rc != MPI_SUCCESS) return rc;
  if (nnodes < 0 || nnodes > comm->size()) {
    return raise(comm, function, MPI_ERR_ARG,
                 "nnodes = " + std::to_string(nnodes) + ", expected 0.." +
                     std::to_string(comm->size()) + " (the size of comm)");
  }
  if (nnodes == 0) return MPI_SUCCESS;
  if (index == nullptr) return null_argument(comm, function, "index", "an array of nnodes ends");
  for (int i = 0; i < nnodes; ++i) {
    const int previous = i == 0 ? 0 : index[i - 1];
    if (index[i] < previous) {
      return raise(comm, function, MPI_ERR_ARG,
                   "index[" + std::to_string(i) + "] = " + std::to_string(index[i]) +
                       ", expected at least " + std::to_string(previous) +
                       " (index holds the running count of edges)");
    }
  }
  if (index[nnodes - 1] > 0 && edges == nullptr) {
    return null_argument(comm, function, "edges", "an array of index[nnodes - 1] ranks");
  }
  for (int e = 0; e < index[nnodes - 1]; ++e) {
    if (edges[e] < 0 || edges[e] >= nnodes) {
      return raise(comm, function, MPI_ERR_ARG,
                   "edges[" + std::to_string(e) + "] = " + std::to_string(edges[e]) +
                       ", expected a node 0.." + std::to_string(nnodes - 1));
    }
  }
  return MPI_SUCCESS;
}

int check_node(MPI_Comm comm, std::string_view function, const Topology& topology, int rank) {
  const int nodes = static_cast<int>(topology.index.size());
  if (rank >= 0 && rank < nodes) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_RANK,
               "rank = " + std::to_string(rank) + ", expected a node of the graph 0.." +
                   std::to_string(nodes - 1));
}

}  // namespace

// `reorder` keeps the identity: a graph says nothing of its members' weights that would make a
// reordering better than the program's own numbering.
extern "C" int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                                 const int edges[], int, MPI_Comm* comm_graph) {
  constexpr std::string_view kFunction = "MPI_Graph_create";
  if (comm_graph != nullptr) *comm_graph = MPI_COMM_NULL;
  if (int rc = check_graph(comm_old, kFunction, nnodes, index, edges); rc != MPI_SUCCESS) {
    return rc;
  }
  if (comm_graph == nullptr) {
    return null_argument(comm_old, kFunction, "comm_graph", "where to store the new communicator");
  }
  auto topology = std::make_shared<Topology>();
  topology->kind = MPI_GRAPH;
  if (nnodes > 0) {
    topology->index.assign(index, index + nnodes);
    topology->edges.assign(edges, edges + index[nnodes - 1]);
  }
  const int rank = comm_old->my_rank();
  return weft::mpi::make_topology_comm(comm_old, rank < nnodes ? rank : MPI_UNDEFINED,
                                       std::move(topology), comm_graph);
}
WEFT_MPI_ALIAS(MPI_Graph_create);

extern "C" int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  constexpr std::string_view kFunction = "MPI_Graphdims_get";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_GRAPH, &topology); rc != MPI_SUCCESS) {
    return rc;
  }
  if (nnodes == nullptr || nedges == nullptr) {
    return null_argument(comm, kFunction, nnodes == nullptr ? "nnodes" : "nedges",
                         "where to store it");
  }
  *nnodes = static_cast<int>(topology->index.size());
  *nedges = static_cast<int>(topology->edges.size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Graphdims_get);

extern "C" int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  constexpr std::string_view kFunction = "MPI_Graph_get";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_GRAPH, &topology); rc != MPI_SUCCESS) {
    return rc;
  }
  if (maxindex < 0 || maxedges < 0) {
    return raise(comm, kFunction, MPI_ERR_ARG,
                 std::string(maxindex < 0 ? "maxindex = " + std::to_string(maxindex)
                                          : "maxedges = " + std::to_string(maxedges)) +
                     ", expected >= 0");
  }
  if ((maxindex > 0 && index == nullptr) || (maxedges > 0 && edges == nullptr)) {
    return null_argument(comm, kFunction, index == nullptr ? "index" : "edges",
                         "an array of maxindex (maxedges) entries");
  }
  // MPI-4.1 8.5.5: as much of each array as the caller made room for.
  const int nodes = std::min(maxindex, static_cast<int>(topology->index.size()));
  const int links = std::min(maxedges, static_cast<int>(topology->edges.size()));
  for (int i = 0; i < nodes; ++i) index[i] = topology->index[static_cast<std::size_t>(i)];
  for (int e = 0; e < links; ++e) edges[e] = topology->edges[static_cast<std::size_t>(e)];
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Graph_get);

extern "C" int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  constexpr std::string_view kFunction = "MPI_Graph_neighbors_count";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_GRAPH, &topology); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_node(comm, kFunction, *topology, rank); rc != MPI_SUCCESS) return rc;
  if (nneighbors == nullptr) {
    return null_argument(comm, kFunction, "nneighbors", "where to store it");
  }
  *nneighbors = weft::mpi::plan_of(*topology, rank).send_blocks;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Graph_neighbors_count);

extern "C" int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  constexpr std::string_view kFunction = "MPI_Graph_neighbors";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_GRAPH, &topology); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_node(comm, kFunction, *topology, rank); rc != MPI_SUCCESS) return rc;
  const int first = rank == 0 ? 0 : topology->index[static_cast<std::size_t>(rank) - 1];
  const int count = topology->index[static_cast<std::size_t>(rank)] - first;
  if (maxneighbors < 0) {
    return raise(comm, kFunction, MPI_ERR_ARG,
                 "maxneighbors = " + std::to_string(maxneighbors) + ", expected >= 0");
  }
  if (maxneighbors > 0 && count > 0 && neighbors == nullptr) {
    return null_argument(comm, kFunction, "neighbors", "an array of maxneighbors ranks");
  }
  for (int i = 0; i < std::min(count, maxneighbors); ++i) {
    neighbors[i] = topology->edges[static_cast<std::size_t>(first + i)];
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Graph_neighbors);

// Local; the identity, as MPI_Graph_create's reorder.
extern "C" int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                              int* newrank) {
  constexpr std::string_view kFunction = "MPI_Graph_map";
  if (int rc = check_graph(comm, kFunction, nnodes, index, edges); rc != MPI_SUCCESS) return rc;
  if (newrank == nullptr) return null_argument(comm, kFunction, "newrank", "where to store it");
  const int rank = comm->my_rank();
  *newrank = rank < nnodes ? rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Graph_map);

extern "C" int PMPI_Topo_test(MPI_Comm comm, int* status) {
  constexpr std::string_view kFunction = "MPI_Topo_test";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (status == nullptr) return null_argument(comm, kFunction, "status", "where to store it");
  const Topology* topology = weft::mpi::topology_of(comm);
  *status = topology != nullptr ? topology->kind : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Topo_test);
