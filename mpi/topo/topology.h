// The process topology a communicator carries (MPI-4.1 8): a Cartesian grid, a graph, or a
// distributed graph. Each member of a communicator holds its own (comm/communicator.h, Local),
// immutable once made and shared by the duplicates of the communicator.
//
// A Cartesian grid and a graph are the same in every member, each keeping the whole of it; a
// distributed graph keeps only the caller's in- and out-edges, which differ between members.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "mpi.h"

namespace weft::mpi {

struct Topology {
  int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH

  // MPI_CART: the extent of each dimension and whether it wraps around.
  std::vector<int> dims;
  std::vector<bool> periods;

  // MPI_GRAPH: as MPI_Graph_create has them, index[i] the end of node i's edges.
  std::vector<int> index;
  std::vector<int> edges;

  // MPI_DIST_GRAPH: the caller's edges, in the order their messages match (see neighbours()).
  std::vector<int> sources;
  std::vector<int> source_weights;
  std::vector<int> destinations;
  std::vector<int> destination_weights;
  bool weighted = false;

  int grid_size() const;  // MPI_CART: the product of dims
  // MPI_CART: the coordinates of a rank of the grid, and back.
  std::vector<int> coords_of(int rank) const;
  int rank_of(const std::vector<int>& coords) const;
  // MPI_CART: MPI_Cart_shift's pair for `rank` (MPI_PROC_NULL off a non-periodic edge).
  void shift(int rank, int direction, int disp, int* source, int* dest) const;
};

// The caller's topology on `comm`, or null.
const Topology* topology_of(MPI_Comm comm);

// Checks that `comm` is a valid intracommunicator of the caller with a topology (of `kind`, when
// not MPI_UNDEFINED); raises MPI_ERR_COMM or MPI_ERR_TOPOLOGY otherwise.
int check_topology(MPI_Comm comm, std::string_view function, int kind, const Topology** topology);

// Refuses an intercommunicator where the standard asks for an intracommunicator.
int check_intra(MPI_Comm comm, std::string_view function);

// One message of a neighbourhood collective: to or from `peer` (a comm rank, never
// MPI_PROC_NULL), with block `block` of the send or receive buffer.
struct NeighbourMessage {
  int peer;
  int block;
};

// The messages of a neighbourhood collective for comm rank `rank`, in the order they are posted,
// and the number of send and receive blocks. Sends go in neighbour order; so do receives, except
// in a Cartesian grid, where each dimension receives from its positive neighbour first: with a
// periodic dimension of size 1 or 2 both neighbours are the same rank, and its first message is
// the one it sent towards its negative neighbour, which is ours in the positive direction
// (MPI-4.1 8.6). In graphs, repeated edges between two ranks match in the order the edges are
// listed, on both sides. MPI_PROC_NULL neighbours have a block but no message.
struct NeighbourPlan {
  int send_blocks = 0;
  int recv_blocks = 0;
  std::vector<NeighbourMessage> sends;
  std::vector<NeighbourMessage> receives;
};
NeighbourPlan plan_of(const Topology& topology, int rank);

// Attaches `topology` to the caller's slot of `comm`.
void attach(MPI_Comm comm, std::shared_ptr<const Topology> topology);

}  // namespace weft::mpi
