// MPI_Scan and MPI_Exscan. Every member publishes its input and result buffer; the elements are
// split into chunks and the member owning a chunk walks the members in rank order, writing each
// one's prefix of that chunk from the previous member's (a small scan is one chunk, walked by the
// last member to arrive inside the final phase). Total work is one operation per member and
// element, shared among the chunk owners; the final phase keeps every buffer valid until the last
// owner is done.
#include <utility>

#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;
using collective::Call;
using collective::Contribution;

namespace {

// Inclusive: result(r) = in(0) op ... op in(r). Built in each result buffer in place, so an input
// that is its result buffer (MPI_IN_PLACE) is used before being overwritten.
void scan_chunk(Call& call, std::size_t first, std::size_t count, MPI_Datatype datatype,
                MPI_Op op) {
  if (count == 0) return;
  const Datatype& type = *datatype;
  const void* previous = nullptr;
  for (int r = 0; r < call.size(); ++r) {
    const Contribution& c = call.of<Contribution>(r);
    void* out = collective::element(c.output, first, type);
    const void* in = collective::element(c.input, first, type);
    if (in != out) copy(in, count, type, out, count, type);
    if (previous != nullptr) apply(op, previous, out, count, datatype);
    previous = out;
  }
}

// Exclusive: result(r) = in(0) op ... op in(r - 1), rank 0's untouched. Result r overwrites input
// r when in place, so the running prefix and the next input wait in scratch buffers.
void exscan_chunk(Call& call, std::size_t first, std::size_t count, MPI_Datatype datatype,
                  MPI_Op op) {
  const int size = call.size();
  if (size < 2 || count == 0) return;
  const Datatype& type = *datatype;
  collective::Scratch prefix_buffer(count, type);
  collective::Scratch next_buffer(count, type);
  void* prefix = prefix_buffer.data();
  void* next = next_buffer.data();
  auto input = [&](int r) {
    return collective::element(call.of<Contribution>(r).input, first, type);
  };
  copy(input(0), count, type, prefix, count, type);
  for (int r = 1; r < size; ++r) {
    const bool last = r == size - 1;
    if (!last) copy(input(r), count, type, next, count, type);
    copy(prefix, count, type, collective::element(call.of<Contribution>(r).output, first, type),
         count, type);
    if (!last) {
      apply(op, prefix, next, count, datatype);
      std::swap(prefix, next);
    }
  }
}

using ChunkWalk = void (*)(Call&, std::size_t, std::size_t, MPI_Datatype, MPI_Op);

int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
         MPI_Comm comm, std::string_view function, ChunkWalk walk) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_count(comm, function, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_op_on(comm, function, op, datatype); rc != MPI_SUCCESS) return rc;
  if (int rc =
          collective::check_not_in_place(comm, function, "recvbuf", recvbuf, "only as sendbuf");
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, count, datatype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (int rc = collective::check_not_aliased(comm, function, sendbuf, recvbuf, count > 0);
      rc != MPI_SUCCESS) {
    return rc;
  }

  Call call(comm);
  const int me = call.rank();
  const Contribution mine{sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf,
                          static_cast<std::size_t>(count), datatype};
  call.publish(&mine);
  const collective::Chunks chunks(mine.count, *datatype, call.size());
  collective::reduce_parts(call, chunks, 0, me, [&](int part) {
    walk(call, chunks.begin(part), chunks.size(part), datatype, op);
  });
  return collective::raise_mismatch(comm, function, call.mismatch());
}

}  // namespace

extern "C" int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm) {
  return scan(sendbuf, recvbuf, count, datatype, op, comm, "MPI_Scan", scan_chunk);
}
WEFT_MPI_ALIAS(MPI_Scan);

extern "C" int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  return scan(sendbuf, recvbuf, count, datatype, op, comm, "MPI_Exscan", exscan_chunk);
}
WEFT_MPI_ALIAS(MPI_Exscan);
