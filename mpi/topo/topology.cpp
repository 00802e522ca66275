#include "topo/topology.h"

#include <string>
#include <utility>

#include "comm/communicator.h"
#include "errhan/error.h"

// Only their addresses matter (MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY).
int weft_mpi_unweighted = 0;
int weft_mpi_weights_empty = 0;

namespace weft::mpi {

int Topology::grid_size() const {
  int size = 1;
  for (int d : dims) size *= d;
  return size;
}

std::vector<int> Topology::coords_of(int rank) const {
  std::vector<int> coords(dims.size());
  // Row-major: the last dimension varies fastest.
  for (std::size_t i = dims.size(); i-- > 0;) {
    coords[i] = rank % dims[i];
    rank /= dims[i];
  }
  return coords;
}

int Topology::rank_of(const std::vector<int>& coords) const {
  int rank = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) rank = rank * dims[i] + coords[i];
  return rank;
}

void Topology::shift(int rank, int direction, int disp, int* source, int* dest) const {
  const int extent = dims[static_cast<std::size_t>(direction)];
  const bool periodic = periods[static_cast<std::size_t>(direction)];
  std::vector<int> coords = coords_of(rank);
  const int here = coords[static_cast<std::size_t>(direction)];
  auto neighbour = [&](long long step) {
    long long c = here + step;
    if (periodic) {
      c %= extent;
      if (c < 0) c += extent;
    } else if (c < 0 || c >= extent) {
      return static_cast<int>(MPI_PROC_NULL);
    }
    coords[static_cast<std::size_t>(direction)] = static_cast<int>(c);
    return rank_of(coords);
  };
  *dest = neighbour(disp);
  *source = neighbour(-static_cast<long long>(disp));
}

const Topology* topology_of(MPI_Comm comm) {
  return comm->local_of_caller().topology.get();
}

void attach(MPI_Comm comm, std::shared_ptr<const Topology> topology) {
  comm->local_of_caller().topology = std::move(topology);
}

namespace {

std::string_view kind_name(int kind) {
  switch (kind) {
    case MPI_CART:
      return "a Cartesian topology (MPI_Cart_create)";
    case MPI_GRAPH:
      return "a graph topology (MPI_Graph_create)";
    case MPI_DIST_GRAPH:
      return "a distributed graph topology (MPI_Dist_graph_create)";
    default:
      return "a process topology";
  }
}

}  // namespace

int check_intra(MPI_Comm comm, std::string_view function) {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter == 0) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_COMM,
               "comm is an intercommunicator, expected an intracommunicator");
}

int check_topology(MPI_Comm comm, std::string_view function, int kind, const Topology** topology) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_intra(comm, function); rc != MPI_SUCCESS) return rc;
  const Topology* found = topology_of(comm);
  if (found == nullptr) {
    return raise(comm, function, MPI_ERR_TOPOLOGY,
                 "comm has no process topology, expected " + std::string(kind_name(kind)));
  }
  if (kind != MPI_UNDEFINED && found->kind != kind) {
    return raise(comm, function, MPI_ERR_TOPOLOGY,
                 "comm has " + std::string(kind_name(found->kind)) + ", expected " +
                     std::string(kind_name(kind)));
  }
  *topology = found;
  return MPI_SUCCESS;
}

NeighbourPlan plan_of(const Topology& topology, int rank) {
  NeighbourPlan plan;
  switch (topology.kind) {
    case MPI_CART: {
      const int ndims = static_cast<int>(topology.dims.size());
      plan.send_blocks = plan.recv_blocks = 2 * ndims;
      for (int d = 0; d < ndims; ++d) {
        int negative = MPI_PROC_NULL;
        int positive = MPI_PROC_NULL;
        topology.shift(rank, d, 1, &negative, &positive);
        if (negative != MPI_PROC_NULL) plan.sends.push_back({negative, 2 * d});
        if (positive != MPI_PROC_NULL) plan.sends.push_back({positive, 2 * d + 1});
        if (positive != MPI_PROC_NULL) plan.receives.push_back({positive, 2 * d + 1});
        if (negative != MPI_PROC_NULL) plan.receives.push_back({negative, 2 * d});
      }
      break;
    }
    case MPI_GRAPH: {
      const int first = rank == 0 ? 0 : topology.index[static_cast<std::size_t>(rank) - 1];
      const int last = topology.index[static_cast<std::size_t>(rank)];
      plan.send_blocks = plan.recv_blocks = last - first;
      for (int e = first; e < last; ++e) {
        plan.sends.push_back({topology.edges[static_cast<std::size_t>(e)], e - first});
        plan.receives.push_back({topology.edges[static_cast<std::size_t>(e)], e - first});
      }
      break;
    }
    case MPI_DIST_GRAPH: {
      plan.send_blocks = static_cast<int>(topology.destinations.size());
      plan.recv_blocks = static_cast<int>(topology.sources.size());
      for (int i = 0; i < plan.send_blocks; ++i) {
        plan.sends.push_back({topology.destinations[static_cast<std::size_t>(i)], i});
      }
      for (int i = 0; i < plan.recv_blocks; ++i) {
        plan.receives.push_back({topology.sources[static_cast<std::size_t>(i)], i});
      }
      break;
    }
    default:
      break;
  }
  return plan;
}

}  // namespace weft::mpi
