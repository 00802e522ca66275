// MPI_Reduce_scatter and MPI_Reduce_scatter_block. Every member publishes its input and reduces
// its own block over all inputs, in rank order. Without MPI_IN_PLACE it reduces straight into its
// result buffer, which nobody else reads; in place, its result buffer is its input, which others
// read until the phase, so the block is reduced aside and copied in after the phase.
#include <optional>

#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;
using collective::Call;
using collective::Contribution;

namespace {

int reduce_scatter(MPI_Comm comm, std::string_view function, const void* sendbuf, void* recvbuf,
                   std::size_t first, std::size_t count, std::size_t total, MPI_Datatype datatype,
                   MPI_Op op) {
  Call call(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const Contribution mine{in_place ? recvbuf : sendbuf, recvbuf, total, datatype};
  call.publish(&mine);
  // Every member reads every input, so each one finds a disagreement by itself.
  const bool agreed = collective::agree(call, 0, call.rank() == 0);
  std::optional<collective::Scratch> scratch;
  if (agreed) {
    void* acc = in_place ? scratch.emplace(count, *datatype).data() : recvbuf;
    auto input = [&](int r) {
      return collective::element(call.of<Contribution>(r).input, first, *datatype);
    };
    collective::fold(call.size(), input, count, datatype, op, acc);
  }
  call.phase();
  if (agreed && in_place && count > 0) {
    copy(scratch->data(), count, *datatype, recvbuf, count, *datatype);
  }
  return collective::raise_mismatch(comm, function, call.mismatch());
}

int check_common(MPI_Comm comm, std::string_view function, const void* sendbuf, const void* recvbuf,
                 MPI_Datatype datatype, MPI_Op op) {
  if (int rc = check_datatype(comm, function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_op_on(comm, function, op, datatype); rc != MPI_SUCCESS) return rc;
  if (int rc =
          collective::check_not_in_place(comm, function, "recvbuf", recvbuf, "only as sendbuf");
      rc != MPI_SUCCESS) {
    return rc;
  }
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, true);
}

}  // namespace

extern "C" int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Reduce_scatter_block";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_count(comm, kFunction, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_common(comm, kFunction, sendbuf, recvbuf, datatype, op); rc != MPI_SUCCESS) {
    return rc;
  }
  const int size = comm->size();
  if (int rc = check_buffer(comm, kFunction, "recvbuf", recvbuf, recvcount, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = check_buffer(comm, kFunction, "sendbuf", sendbuf, recvcount, datatype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  const std::size_t count = static_cast<std::size_t>(recvcount);
  return reduce_scatter(comm, kFunction, sendbuf, recvbuf,
                        count * static_cast<std::size_t>(comm->my_rank()), count,
                        count * static_cast<std::size_t>(size), datatype, op);
}
WEFT_MPI_ALIAS(MPI_Reduce_scatter_block);

extern "C" int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Reduce_scatter";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  const int size = comm->size();
  if (int rc = collective::check_counts(comm, kFunction, "recvcounts", recvcounts, size);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_common(comm, kFunction, sendbuf, recvbuf, datatype, op); rc != MPI_SUCCESS) {
    return rc;
  }
  const int me = comm->my_rank();
  if (int rc = check_buffer(comm, kFunction, "recvbuf", recvbuf, recvcounts[me], datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = collective::check_buffer_of(comm, kFunction, "sendbuf", sendbuf, recvcounts, size,
                                             datatype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  std::size_t first = 0;
  std::size_t total = 0;
  for (int r = 0; r < size; ++r) {
    if (r == me) first = total;
    total += static_cast<std::size_t>(recvcounts[r]);
  }
  return reduce_scatter(comm, kFunction, sendbuf, recvbuf, first,
                        static_cast<std::size_t>(recvcounts[me]), total, datatype, op);
}
WEFT_MPI_ALIAS(MPI_Reduce_scatter);
