// Cartesian topologies (MPI-4.1 8.5.1-8.5.5 and 8.5.7): making a grid, asking it, shifting in
// it, cutting it into sub-grids, and mapping ranks onto it.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "init/world.h"
#include "topo/dims.h"
#include "topo/grid_placement.h"
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

// The checks of a grid's description shared by MPI_Cart_create and MPI_Cart_map; on success
// *nodes is the grid's size.
int check_grid(MPI_Comm comm, std::string_view function, int ndims, const int dims[],
               const int periods[], int* nodes) {
  if (ndims < 0) {
    return raise(comm, function, MPI_ERR_DIMS,
                 "ndims = " + std::to_string(ndims) + ", expected >= 0");
  }
  if (ndims > 0 && dims == nullptr) {
    return null_argument(comm, function, "dims", "an array of ndims extents");
  }
  if (ndims > 0 && periods == nullptr) {
    return null_argument(comm, function, "periods", "an array of ndims flags");
  }
  long long size = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) {
      return raise(
          comm, function, MPI_ERR_DIMS,
          "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) + ", expected > 0");
    }
    size *= dims[i];
    if (size > comm->size()) break;
  }
  if (size > comm->size()) {
    return raise(comm, function, MPI_ERR_DIMS,
                 "the grid of dims has more cells than the " + std::to_string(comm->size()) +
                     " processes of comm, expected at most that many");
  }
  *nodes = static_cast<int>(size);
  return MPI_SUCCESS;
}

std::shared_ptr<Topology> grid(int ndims, const int dims[], const int periods[]) {
  auto topology = std::make_shared<Topology>();
  topology->kind = MPI_CART;
  topology->dims.assign(dims, dims + ndims);
  for (int i = 0; i < ndims; ++i) topology->periods.push_back(periods[i] != 0);
  return topology;
}

int check_entry(MPI_Comm comm, std::string_view function) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  return weft::mpi::check_intra(comm, function);
}

}  // namespace

extern "C" int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                                int reorder, MPI_Comm* comm_cart) {
  constexpr std::string_view kFunction = "MPI_Cart_create";
  // A failed call leaves no communicator behind (MPICH's errors/topo/cartsmall checks it).
  if (comm_cart != nullptr) *comm_cart = MPI_COMM_NULL;
  if (int rc = check_entry(comm_old, kFunction); rc != MPI_SUCCESS) return rc;
  int nodes = 0;
  if (int rc = check_grid(comm_old, kFunction, ndims, dims, periods, &nodes); rc != MPI_SUCCESS) {
    return rc;
  }
  if (comm_cart == nullptr) {
    return null_argument(comm_old, kFunction, "comm_cart", "where to store the new communicator");
  }
  const int rank = comm_old->my_rank();
  int new_rank = rank < nodes ? rank : MPI_UNDEFINED;
  if (reorder != 0) {
    // Every member learns where the others run, and all compute the same placement
    // (grid_placement.h) for the first `nodes` members.
    const weft::mpi::RankLocation here = weft::mpi::my_location();
    const int mine[3] = {here.process, here.numa, here.core};
    std::vector<int> all(static_cast<std::size_t>(3 * comm_old->size()));
    if (int rc = PMPI_Allgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, comm_old);
        rc != MPI_SUCCESS) {
      return rc;
    }
    std::vector<weft::mpi::RankLocation> locations(static_cast<std::size_t>(nodes));
    for (int r = 0; r < nodes; ++r) locations[r] = {all[3 * r], all[3 * r + 1], all[3 * r + 2]};
    if (rank < nodes) {
      new_rank = weft::mpi::place_in_grid(grid(ndims, dims, periods)->dims, locations)[rank];
    }
  }
  return weft::mpi::make_topology_comm(comm_old, new_rank, grid(ndims, dims, periods), comm_cart);
}
WEFT_MPI_ALIAS(MPI_Cart_create);

extern "C" int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  constexpr std::string_view kFunction = "MPI_Dims_create";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (nnodes <= 0) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_ARG,
                 "nnodes = " + std::to_string(nnodes) + ", expected > 0");
  }
  if (ndims < 0) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_DIMS,
                 "ndims = " + std::to_string(ndims) + ", expected >= 0");
  }
  if (ndims > 0 && dims == nullptr) {
    return null_argument(MPI_COMM_NULL, kFunction, "dims", "an array of ndims extents");
  }
  long long fixed = 1;
  int free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) {
      return raise(MPI_COMM_NULL, kFunction, MPI_ERR_DIMS,
                   "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) +
                       ", expected >= 0 (0: to be chosen)");
    }
    if (dims[i] == 0) {
      ++free_dims;
    } else {
      fixed *= dims[i];
      if (fixed > nnodes) break;
    }
  }
  if (nnodes % fixed != 0 || (free_dims == 0 && fixed != nnodes)) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_DIMS,
                 "nnodes = " + std::to_string(nnodes) +
                     " is not a multiple of the product of the non-zero dims (" +
                     std::to_string(fixed) + "), expected one" +
                     (free_dims == 0 ? " equal to nnodes when every dims[i] is given" : ""));
  }
  if (free_dims == 0) return MPI_SUCCESS;
  const std::vector<int> chosen =
      weft::mpi::balanced_dims(static_cast<int>(nnodes / fixed), free_dims);
  for (int i = 0, next = 0; i < ndims; ++i) {
    if (dims[i] == 0) dims[i] = chosen[static_cast<std::size_t>(next++)];
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Dims_create);

extern "C" int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  constexpr std::string_view kFunction = "MPI_Cartdim_get";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_CART, &topology); rc != MPI_SUCCESS) return rc;
  if (ndims == nullptr) return null_argument(comm, kFunction, "ndims", "where to store it");
  *ndims = static_cast<int>(topology->dims.size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Cartdim_get);

extern "C" int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  constexpr std::string_view kFunction = "MPI_Cart_get";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_CART, &topology); rc != MPI_SUCCESS) return rc;
  const int ndims = static_cast<int>(topology->dims.size());
  if (maxdims < ndims) {
    return raise(comm, kFunction, MPI_ERR_ARG,
                 "maxdims = " + std::to_string(maxdims) + ", expected at least the " +
                     std::to_string(ndims) + " dimensions of comm's grid");
  }
  if (ndims > 0 && (dims == nullptr || periods == nullptr || coords == nullptr)) {
    return null_argument(comm, kFunction,
                         dims == nullptr      ? "dims"
                         : periods == nullptr ? "periods"
                                              : "coords",
                         "an array of maxdims entries");
  }
  const std::vector<int> mine = topology->coords_of(comm->my_rank());
  for (int i = 0; i < ndims; ++i) {
    dims[i] = topology->dims[static_cast<std::size_t>(i)];
    periods[i] = topology->periods[static_cast<std::size_t>(i)] ? 1 : 0;
    coords[i] = mine[static_cast<std::size_t>(i)];
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Cart_get);

extern "C" int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  constexpr std::string_view kFunction = "MPI_Cart_rank";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_CART, &topology); rc != MPI_SUCCESS) return rc;
  const int ndims = static_cast<int>(topology->dims.size());
  if (ndims > 0 && coords == nullptr) {
    return null_argument(comm, kFunction, "coords", "an array of ndims coordinates");
  }
  if (rank == nullptr) return null_argument(comm, kFunction, "rank", "where to store it");
  std::vector<int> wrapped(coords, coords + ndims);
  for (int i = 0; i < ndims; ++i) {
    const int extent = topology->dims[static_cast<std::size_t>(i)];
    int& c = wrapped[static_cast<std::size_t>(i)];
    if (topology->periods[static_cast<std::size_t>(i)]) {
      c %= extent;
      if (c < 0) c += extent;
    } else if (c < 0 || c >= extent) {
      return raise(comm, kFunction, MPI_ERR_ARG,
                   "coords[" + std::to_string(i) + "] = " + std::to_string(c) +
                       " in a non-periodic dimension, expected 0.." + std::to_string(extent - 1));
    }
  }
  *rank = topology->rank_of(wrapped);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Cart_rank);

extern "C" int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  constexpr std::string_view kFunction = "MPI_Cart_coords";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_CART, &topology); rc != MPI_SUCCESS) return rc;
  const int ndims = static_cast<int>(topology->dims.size());
  if (rank < 0 || rank >= comm->size()) {
    return raise(
        comm, kFunction, MPI_ERR_RANK,
        "rank = " + std::to_string(rank) + ", expected 0.." + std::to_string(comm->size() - 1));
  }
  if (maxdims < ndims) {
    return raise(comm, kFunction, MPI_ERR_ARG,
                 "maxdims = " + std::to_string(maxdims) + ", expected at least the " +
                     std::to_string(ndims) + " dimensions of comm's grid");
  }
  if (ndims > 0 && coords == nullptr) {
    return null_argument(comm, kFunction, "coords", "an array of maxdims entries");
  }
  const std::vector<int> found = topology->coords_of(rank);
  for (int i = 0; i < ndims; ++i) coords[i] = found[static_cast<std::size_t>(i)];
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Cart_coords);

extern "C" int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source,
                               int* rank_dest) {
  constexpr std::string_view kFunction = "MPI_Cart_shift";
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_CART, &topology); rc != MPI_SUCCESS) return rc;
  const int ndims = static_cast<int>(topology->dims.size());
  if (direction < 0 || direction >= ndims) {
    return raise(comm, kFunction, MPI_ERR_DIMS,
                 "direction = " + std::to_string(direction) + ", expected 0.." +
                     std::to_string(ndims - 1) + " (a dimension of comm's grid)");
  }
  if (rank_source == nullptr || rank_dest == nullptr) {
    return null_argument(comm, kFunction, rank_source == nullptr ? "rank_source" : "rank_dest",
                         "where to store it");
  }
  topology->shift(comm->my_rank(), direction, disp, rank_source, rank_dest);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Cart_shift);

// The members that share their coordinates in the dropped dimensions form one sub-grid, ranked
// in it by their coordinates in the kept ones.
extern "C" int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  constexpr std::string_view kFunction = "MPI_Cart_sub";
  if (newcomm != nullptr) *newcomm = MPI_COMM_NULL;
  const Topology* topology = nullptr;
  if (int rc = check_topology(comm, kFunction, MPI_CART, &topology); rc != MPI_SUCCESS) return rc;
  const int ndims = static_cast<int>(topology->dims.size());
  if (ndims > 0 && remain_dims == nullptr) {
    return null_argument(comm, kFunction, "remain_dims", "an array of ndims flags");
  }
  if (newcomm == nullptr) {
    return null_argument(comm, kFunction, "newcomm", "where to store the new communicator");
  }
  const std::vector<int> coords = topology->coords_of(comm->my_rank());
  auto sub = std::make_shared<Topology>();
  sub->kind = MPI_CART;
  int color = 0;
  int key = 0;
  for (int i = 0; i < ndims; ++i) {
    const int extent = topology->dims[static_cast<std::size_t>(i)];
    if (remain_dims[i] != 0) {
      sub->dims.push_back(extent);
      sub->periods.push_back(topology->periods[static_cast<std::size_t>(i)]);
      key = key * extent + coords[static_cast<std::size_t>(i)];
    } else {
      color = color * extent + coords[static_cast<std::size_t>(i)];
    }
  }
  if (int rc = PMPI_Comm_split(comm, color, key, newcomm); rc != MPI_SUCCESS) return rc;
  weft::mpi::attach(*newcomm, std::move(sub));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Cart_sub);

// Local: only the process of every member is known here, so each process's members get a
// compact box of the grid, ordered by old rank (grid_placement.h); MPI_Cart_create with reorder
// also knows their cores and NUMA nodes.
extern "C" int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                             int* newrank) {
  constexpr std::string_view kFunction = "MPI_Cart_map";
  if (int rc = check_entry(comm, kFunction); rc != MPI_SUCCESS) return rc;
  int nodes = 0;
  if (int rc = check_grid(comm, kFunction, ndims, dims, periods, &nodes); rc != MPI_SUCCESS) {
    return rc;
  }
  if (newrank == nullptr) return null_argument(comm, kFunction, "newrank", "where to store it");
  const int rank = comm->my_rank();
  if (rank >= nodes) {
    *newrank = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  std::vector<weft::mpi::RankLocation> locations(static_cast<std::size_t>(nodes));
  for (int r = 0; r < nodes; ++r) {
    locations[r].process = weft::mpi::world()->process_of(comm->world_rank(r));
  }
  *newrank = weft::mpi::place_in_grid(std::vector<int>(dims, dims + ndims), locations)[rank];
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Cart_map);
