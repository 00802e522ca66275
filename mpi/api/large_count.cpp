#include "api/large_count.h"

#include <string>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "request/request.h"
#include "topo/topology.h"

namespace weft::mpi::large_count {

int refuse(std::string_view function, std::string_view argument, long long value, long long largest,
           MPI_Comm comm) {
  const bool displacement = argument.find("displ") != std::string_view::npos || argument == "lb" ||
                            argument == "extent" || argument == "stride";
  std::string detail = std::string(argument) + " = " + std::to_string(value) + ", expected " +
                       (value < 0 ? "at least " + std::to_string(-largest - 1)
                                  : "at most " + std::to_string(largest)) +
                       ": weft carries this argument of " +
                       std::string(function.substr(0, function.size() - 2)) +
                       " as a 32-bit int; describe more data with a larger datatype";
  return raise(comm, function, displacement ? MPI_ERR_ARG : MPI_ERR_COUNT, detail);
}

int check_comm_for(std::string_view function, MPI_Comm comm) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  return check_comm(comm, function);
}

void keep_with(MPI_Request request, std::shared_ptr<void> owned) {
  if (request != MPI_REQUEST_NULL) request->keep_alive = std::move(owned);
}

int group_size(MPI_Comm comm) {
  int inter = 0;
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
  return PMPI_Comm_size(comm, &size) == MPI_SUCCESS ? size : 0;
}

int local_size(MPI_Comm comm) {
  int size = 0;
  if (comm == MPI_COMM_NULL) return 0;
  return PMPI_Comm_size(comm, &size) == MPI_SUCCESS ? size : 0;
}

int indegree_size(MPI_Comm comm) {
  const Topology* topology = topology_of(comm);
  return topology != nullptr ? plan_of(*topology, comm->my_rank()).recv_blocks : 0;
}

int outdegree_size(MPI_Comm comm) {
  const Topology* topology = topology_of(comm);
  return topology != nullptr ? plan_of(*topology, comm->my_rank()).send_blocks : 0;
}

bool is_root(MPI_Comm comm, int root) {
  int rank = -1;
  if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return false;
  return rank == root;
}

}  // namespace weft::mpi::large_count
