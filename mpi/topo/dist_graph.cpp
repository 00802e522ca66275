// Distributed graph topologies (MPI-4.1 8.5.4, 8.5.5). Each member keeps only its own in- and
// out-edges. MPI_Dist_graph_create lets any member name any edge: the edges go to their two
// ends in one all-to-all on the old communicator, and every member lists what it receives in
// the order of the naming member's rank, then of its position in that member's arguments, so
// that both ends of repeated edges between two ranks list them in the same order (the order
// their messages match in, topology.h). `reorder` keeps the identity: the weights are hints of
// the program's traffic, but the member ranks it computes with are its own to choose.
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

int check_degree(MPI_Comm comm, std::string_view function, std::string_view argument, int value) {
  if (value >= 0) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_ARG,
               std::string(argument) + " = " + std::to_string(value) + ", expected >= 0");
}

// `count` ranks of comm, and their weights unless MPI_UNWEIGHTED.
int check_edges(MPI_Comm comm, std::string_view function, std::string_view argument,
                const int ranks[], std::string_view weights_argument, const int weights[],
                int count) {
  if (count > 0 && ranks == nullptr) {
    return null_argument(comm, function, argument, "an array of ranks");
  }
  for (int i = 0; i < count; ++i) {
    if (ranks[i] < 0 || ranks[i] >= comm->size()) {
      return raise(comm, function, MPI_ERR_RANK,
                   std::string(argument) + "[" + std::to_string(i) +
                       "] = " + std::to_string(ranks[i]) + ", expected a rank of comm_old 0.." +
                       std::to_string(comm->size() - 1));
    }
  }
  // Without edges there are no weights to read: MPICH takes NULL there too, and programs pass it.
  if (count == 0 || weights == MPI_UNWEIGHTED) return MPI_SUCCESS;
  if (weights == nullptr) {
    return null_argument(comm, function, weights_argument, "an array of weights or MPI_UNWEIGHTED");
  }
  if (weights == MPI_WEIGHTS_EMPTY) {
    return raise(comm, function, MPI_ERR_ARG,
                 std::string(weights_argument) + " = MPI_WEIGHTS_EMPTY with " +
                     std::to_string(count) + " edges, expected their weights");
  }
  for (int i = 0; i < count; ++i) {
    if (weights[i] < 0) {
      return raise(comm, function, MPI_ERR_ARG,
                   std::string(weights_argument) + "[" + std::to_string(i) +
                       "] = " + std::to_string(weights[i]) + ", expected >= 0");
    }
  }
  return MPI_SUCCESS;
}

int check_old(MPI_Comm comm, std::string_view function) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  return weft::mpi::check_intra(comm, function);
}

int weight_at(const int weights[], int i) {
  return weights == MPI_UNWEIGHTED || weights == MPI_WEIGHTS_EMPTY || weights == nullptr
             ? 1
             : weights[i];
}

}  // namespace

extern "C" int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                               const int sourceweights[], int outdegree,
                                               const int destinations[], const int destweights[],
                                               MPI_Info, int, MPI_Comm* comm_dist_graph) {
  constexpr std::string_view kFunction = "MPI_Dist_graph_create_adjacent";
  if (comm_dist_graph != nullptr) *comm_dist_graph = MPI_COMM_NULL;
  if (int rc = check_old(comm_old, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_degree(comm_old, kFunction, "indegree", indegree); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_degree(comm_old, kFunction, "outdegree", outdegree); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_edges(comm_old, kFunction, "sources", sources, "sourceweights", sourceweights,
                           indegree);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_edges(comm_old, kFunction, "destinations", destinations, "destweights",
                           destweights, outdegree);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (comm_dist_graph == nullptr) {
    return null_argument(comm_old, kFunction, "comm_dist_graph",
                         "where to store the new communicator");
  }
  auto topology = std::make_shared<Topology>();
  topology->kind = MPI_DIST_GRAPH;
  topology->weighted = sourceweights != MPI_UNWEIGHTED || destweights != MPI_UNWEIGHTED;
  for (int i = 0; i < indegree; ++i) {
    topology->sources.push_back(sources[i]);
    topology->source_weights.push_back(weight_at(sourceweights, i));
  }
  for (int i = 0; i < outdegree; ++i) {
    topology->destinations.push_back(destinations[i]);
    topology->destination_weights.push_back(weight_at(destweights, i));
  }
  return weft::mpi::make_topology_comm(comm_old, comm_old->my_rank(), std::move(topology),
                                       comm_dist_graph);
}
WEFT_MPI_ALIAS(MPI_Dist_graph_create_adjacent);

extern "C" int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                      const int degrees[], const int destinations[],
                                      const int weights[], MPI_Info, int,
                                      MPI_Comm* comm_dist_graph) {
  constexpr std::string_view kFunction = "MPI_Dist_graph_create";
  if (comm_dist_graph != nullptr) *comm_dist_graph = MPI_COMM_NULL;
  if (int rc = check_old(comm_old, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_degree(comm_old, kFunction, "n", n); rc != MPI_SUCCESS) return rc;
  if (n > 0 && degrees == nullptr) {
    return null_argument(comm_old, kFunction, "degrees", "an array of n degrees");
  }
  int edges = 0;
  for (int i = 0; i < n; ++i) {
    const std::string name = "degrees[" + std::to_string(i) + "]";
    if (int rc = check_degree(comm_old, kFunction, name, degrees[i]); rc != MPI_SUCCESS) return rc;
    edges += degrees[i];
  }
  if (int rc = check_edges(comm_old, kFunction, "sources", sources, "weights", MPI_UNWEIGHTED, n);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc =
          check_edges(comm_old, kFunction, "destinations", destinations, "weights", weights, edges);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (comm_dist_graph == nullptr) {
    return null_argument(comm_old, kFunction, "comm_dist_graph",
                         "where to store the new communicator");
  }
  // Each edge goes to its source as an out-edge and to its destination as an in-edge, three
  // ints each: which list, the other end, the weight.
  constexpr int kOut = 0;
  constexpr int kIn = 1;
  const int size = comm_old->size();
  std::vector<std::vector<int>> outgoing(static_cast<std::size_t>(size));
  for (int i = 0, e = 0; i < n; ++i) {
    for (int j = 0; j < degrees[i]; ++j, ++e) {
      const int weight = weight_at(weights, e);
      const int from = sources[i];
      const int to = destinations[e];
      outgoing[from].insert(outgoing[from].end(), {kOut, to, weight});
      outgoing[to].insert(outgoing[to].end(), {kIn, from, weight});
    }
  }
  std::vector<int> send_counts(static_cast<std::size_t>(size));
  std::vector<int> send_displs(static_cast<std::size_t>(size));
  std::vector<int> sent;
  for (int r = 0; r < size; ++r) {
    send_counts[r] = static_cast<int>(outgoing[r].size());
    send_displs[r] = static_cast<int>(sent.size());
    sent.insert(sent.end(), outgoing[r].begin(), outgoing[r].end());
  }
  std::vector<int> recv_counts(static_cast<std::size_t>(size));
  if (int rc =
          PMPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_old);
      rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<int> recv_displs(static_cast<std::size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    recv_displs[r] = total;
    total += recv_counts[r];
  }
  std::vector<int> received(static_cast<std::size_t>(total));
  if (int rc = PMPI_Alltoallv(sent.data(), send_counts.data(), send_displs.data(), MPI_INT,
                              received.data(), recv_counts.data(), recv_displs.data(), MPI_INT,
                              comm_old);
      rc != MPI_SUCCESS) {
    return rc;
  }
  auto topology = std::make_shared<Topology>();
  topology->kind = MPI_DIST_GRAPH;
  topology->weighted = weights != MPI_UNWEIGHTED;
  for (int k = 0; k + 2 < total; k += 3) {
    if (received[k] == kOut) {
      topology->destinations.push_back(received[k + 1]);
      topology->destination_weights.push_back(received[k + 2]);
    } else {
      topology->sources.push_back(received[k + 1]);
      topology->source_weights.push_back(received[k + 2]);
    }
  }
  return weft::mpi::make_topology_comm(comm_old, comm_old->my_rank(), std::move(topology),
                                       comm_dist_graph);
}
WEFT_MPI_ALIAS(MPI_Dist_graph_create);

extern "C" int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree,
                                               int* weighted) {
  constexpr std::string_view kFunction = "MPI_Dist_graph_neighbors_count";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_DIST_GRAPH, &topology); rc != MPI_SUCCESS) {
    return rc;
  }
  if (indegree == nullptr || outdegree == nullptr || weighted == nullptr) {
    return null_argument(comm, kFunction,
                         indegree == nullptr    ? "indegree"
                         : outdegree == nullptr ? "outdegree"
                                                : "weighted",
                         "where to store it");
  }
  *indegree = static_cast<int>(topology->sources.size());
  *outdegree = static_cast<int>(topology->destinations.size());
  *weighted = topology->weighted ? 1 : 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Dist_graph_neighbors_count);

extern "C" int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                         int sourceweights[], int maxoutdegree, int destinations[],
                                         int destweights[]) {
  constexpr std::string_view kFunction = "MPI_Dist_graph_neighbors";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_DIST_GRAPH, &topology); rc != MPI_SUCCESS) {
    return rc;
  }
  const int in = static_cast<int>(topology->sources.size());
  const int out = static_cast<int>(topology->destinations.size());
  if (maxindegree < in || maxoutdegree < out) {
    return raise(comm, kFunction, MPI_ERR_ARG,
                 maxindegree < in ? "maxindegree = " + std::to_string(maxindegree) +
                                        ", expected at least the indegree " + std::to_string(in)
                                  : "maxoutdegree = " + std::to_string(maxoutdegree) +
                                        ", expected at least the outdegree " + std::to_string(out));
  }
  if ((in > 0 && sources == nullptr) || (out > 0 && destinations == nullptr)) {
    return null_argument(comm, kFunction, sources == nullptr ? "sources" : "destinations",
                         "an array of the degree's ranks");
  }
  auto give_weights = [&](int* array) {
    return topology->weighted && array != nullptr && array != MPI_UNWEIGHTED &&
           array != MPI_WEIGHTS_EMPTY;
  };
  for (int i = 0; i < in; ++i) {
    sources[i] = topology->sources[static_cast<std::size_t>(i)];
    if (give_weights(sourceweights)) {
      sourceweights[i] = topology->source_weights[static_cast<std::size_t>(i)];
    }
  }
  for (int i = 0; i < out; ++i) {
    destinations[i] = topology->destinations[static_cast<std::size_t>(i)];
    if (give_weights(destweights)) {
      destweights[i] = topology->destination_weights[static_cast<std::size_t>(i)];
    }
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Dist_graph_neighbors);
