// MPI_Reduce and MPI_Allreduce. Every member publishes its input; the elements are split into
// chunks and the member owning a chunk reduces it over all inputs, in rank order, straight into
// the result buffers: the root's (Reduce) or every member's (Allreduce). A small reduction is one
// chunk, reduced by the last member to arrive inside the final phase. Owners write disjoint chunks
// and read only their own chunk of the inputs, so an input that is also a result buffer
// (MPI_IN_PLACE) is read before it is written; the final phase keeps every buffer valid until the
// last writer is done.
#include <optional>

#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;
using collective::Call;
using collective::Contribution;

namespace {

// Reduces elements [first, first + count) of every member's input into `acc` and returns it, or
// into `scratch` when `acc` is one of the inputs (MPI_IN_PLACE) and returns that.
void* reduce_chunk(Call& call, std::size_t first, std::size_t count, MPI_Datatype type, MPI_Op op,
                   void* acc, std::optional<collective::Scratch>& scratch) {
  bool aliased = false;
  for (int r = 0; r < call.size() && !aliased; ++r) {
    aliased = collective::element(call.of<Contribution>(r).input, first, *type) == acc;
  }
  if (aliased) acc = scratch.emplace(count, *type).data();
  auto input = [&](int r) {
    return collective::element(call.of<Contribution>(r).input, first, *type);
  };
  collective::fold(call.size(), input, count, type, op, acc);
  return acc;
}

int check_reduction(MPI_Comm comm, std::string_view function, const void* sendbuf,
                    const void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    bool receives) {
  if (int rc = check_count(comm, function, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_op_on(comm, function, op, datatype); rc != MPI_SUCCESS) return rc;
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, count, datatype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (!receives) return MPI_SUCCESS;
  if (int rc =
          collective::check_not_in_place(comm, function, "recvbuf", recvbuf, "only as sendbuf");
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, count > 0);
}

}  // namespace

extern "C" int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Reduce";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_rank(comm, kFunction, "root", root, false); rc != MPI_SUCCESS) return rc;
  const bool is_root = comm->my_rank() == root;
  if (!is_root) {
    if (int rc = collective::check_not_in_place(comm, kFunction, "sendbuf", sendbuf,
                                                "only as sendbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (int rc = check_reduction(comm, kFunction, sendbuf, recvbuf, count, datatype, op, is_root);
      rc != MPI_SUCCESS) {
    return rc;
  }

  Call call(comm);
  const int size = call.size();
  const Contribution mine{sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf,
                          static_cast<std::size_t>(count), datatype};
  call.publish(&mine);
  const collective::Chunks chunks(mine.count, *datatype, size);
  std::optional<collective::Scratch> scratch;
  // Chunks are owned from the root on, so that the root reduces the first.
  const int own_part = (call.rank() - root + size) % size;
  collective::reduce_parts(call, chunks, root, own_part, [&](int part) {
    const std::size_t first = chunks.begin(part);
    const std::size_t length = chunks.size(part);
    void* result = collective::element(call.of<Contribution>(root).output, first, *datatype);
    void* acc = reduce_chunk(call, first, length, datatype, op, result, scratch);
    if (acc != result) copy(acc, length, *datatype, result, length, *datatype);
  });
  return collective::raise_mismatch(comm, kFunction, call.mismatch());
}
WEFT_MPI_ALIAS(MPI_Reduce);

extern "C" int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Allreduce";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_reduction(comm, kFunction, sendbuf, recvbuf, count, datatype, op, true);
      rc != MPI_SUCCESS) {
    return rc;
  }

  Call call(comm);
  const int size = call.size();
  const int me = call.rank();
  const Contribution mine{sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf,
                          static_cast<std::size_t>(count), datatype};
  call.publish(&mine);
  const collective::Chunks chunks(mine.count, *datatype, size);
  std::optional<collective::Scratch> scratch;
  collective::reduce_parts(call, chunks, 0, me, [&](int part) {
    const std::size_t first = chunks.begin(part);
    const std::size_t length = chunks.size(part);
    void* own = collective::element(recvbuf, first, *datatype);
    void* acc = reduce_chunk(call, first, length, datatype, op, own, scratch);
    // Starting after the caller spreads the owners' writes over the members.
    for (int k = acc == own ? 1 : 0; k < size; ++k) {
      const int r = (me + k) % size;
      void* result = collective::element(call.of<Contribution>(r).output, first, *datatype);
      copy(acc, length, *datatype, result, length, *datatype);
    }
  });
  return collective::raise_mismatch(comm, kFunction, call.mismatch());
}
WEFT_MPI_ALIAS(MPI_Allreduce);
