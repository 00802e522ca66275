// MPI_Scan and MPI_Exscan. Every member publishes its input and result buffer; the elements are
// split into chunks and the member owning a chunk walks the members in rank order, writing each
// one's prefix of that chunk from the previous member's (a small scan is one chunk, walked by the
// last member to arrive inside the final phase). Total work is one operation per member and
// element, shared among the chunk owners; the final phase keeps every buffer valid until the last
// owner is done.
#include <optional>
#include <utility>

#include "coll/collective.h"
#include "coll/collective_spanning.h"
#include "coll/inter_collective.h"
#include "coll/nbc_reduction.h"
#include "errhan/error.h"
#include "util/profiling.h"
#include "weft/trace.h"

using namespace weft::mpi;
using collective::Call;
using collective::Contribution;

namespace {

// Inclusive: result(r) = in(0) op ... op in(r). Built in each result buffer in place, so an input
// that is its result buffer (MPI_IN_PLACE) is used before being overwritten.
template <class Members>
void scan_chunk(Members& members, std::size_t first, std::size_t count, MPI_Datatype datatype,
                MPI_Op op) {
  if (count == 0) return;
  const Datatype& type = *datatype;
  const void* previous = nullptr;
  for (int r = 0; r < members.size(); ++r) {
    const Contribution& c = members.template of<Contribution>(r);
    void* out = collective::element(c.output, first, type);
    const void* in = collective::element(c.input, first, type);
    if (in != out) copy(in, count, type, out, count, type);
    if (previous != nullptr) apply(op, previous, out, count, datatype);
    previous = out;
  }
}

// Exclusive: result(r) = in(0) op ... op in(r - 1), rank 0's untouched. Result r overwrites input
// r when in place, so the running prefix and the next input wait in scratch buffers.
template <class Members>
void exscan_chunk(Members& members, std::size_t first, std::size_t count, MPI_Datatype datatype,
                  MPI_Op op) {
  const int size = members.size();
  if (size < 2 || count == 0) return;
  const Datatype& type = *datatype;
  collective::Scratch prefix_buffer(count, type);
  collective::Scratch next_buffer(count, type);
  void* prefix = prefix_buffer.data();
  void* next = next_buffer.data();
  auto input = [&](int r) {
    return collective::element(members.template of<Contribution>(r).input, first, type);
  };
  copy(input(0), count, type, prefix, count, type);
  for (int r = 1; r < size; ++r) {
    const bool last = r == size - 1;
    if (!last) copy(input(r), count, type, next, count, type);
    copy(prefix, count, type,
         collective::element(members.template of<Contribution>(r).output, first, type), count,
         type);
    if (!last) {
      apply(op, prefix, next, count, datatype);
      std::swap(prefix, next);
    }
  }
}

// Walks chunk [first, first + count) of every member, inclusively or exclusively.
template <bool kExclusive, class Members>
void walk(Members& members, std::size_t first, std::size_t count, MPI_Datatype datatype,
          MPI_Op op) {
  if constexpr (kExclusive) {
    exscan_chunk(members, first, count, datatype, op);
  } else {
    scan_chunk(members, first, count, datatype, op);
  }
}

// The nonblocking scans: one piece per chunk of the elements, walking the members in rank order.
template <bool kExclusive>
class ScanOp : public nbc::ReductionOp<> {
 public:
  using ReductionOp::ReductionOp;

 private:
  Work plan() override {
    if (disagree(0)) return {};
    const nbc::ReductionSide& first = of(0);
    chunks_.emplace(first.count, *first.type, size());
    return {chunks_->parts(), first.bytes() * static_cast<std::size_t>(size())};
  }
  int home(int index) const override { return index; }
  void run(int index) override {
    walk<kExclusive>(*this, chunks_->begin(index), chunks_->size(index), of(0).datatype, of(0).op);
  }
  std::optional<collective::Chunks> chunks_;
};

template <bool kExclusive>
int scan(const collective::Start& start, const void* sendbuf, void* recvbuf, int count,
         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, std::string_view function) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter()) return intercoll::refuse(function, comm);
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

  if (spanning::spans(comm)) {
    return spanning::run(comm, function, start, [=](int tag) {
      return spanning::scan(sendbuf, recvbuf, count, datatype, op, comm, tag, !kExclusive);
    });
  }
  if (!start.blocking()) {
    const nbc::ReductionSide mine =
        nbc::contribution(sendbuf, recvbuf, static_cast<std::size_t>(count), datatype, op, 0);
    return nbc::issue<ScanOp<kExclusive>>(
        comm, function, start,
        [mine](ScanOp<kExclusive>& scan, int rank) { scan.side(rank) = mine; });
  }
  Call call(comm);
  const int me = call.rank();
  const Contribution mine{sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf,
                          static_cast<std::size_t>(count), datatype};
  call.publish(&mine);
  const collective::Chunks chunks(mine.count, *datatype, call.size());
  collective::reduce_parts(call, chunks, 0, me, [&](int part) {
    walk<kExclusive>(call, chunks.begin(part), chunks.size(part), datatype, op);
  });
  return collective::raise_mismatch(comm, function, call.mismatch());
}

}  // namespace

extern "C" int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scan<false>(collective::Start{}, sendbuf, recvbuf, count, datatype, op, comm, "MPI_Scan");
}
WEFT_MPI_ALIAS(MPI_Scan);

extern "C" int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scan<false>(collective::Start::nonblocking(request, {{datatype, MPI_DATATYPE_NULL}, op}),
                     sendbuf, recvbuf, count, datatype, op, comm, "MPI_Iscan");
}
WEFT_MPI_ALIAS(MPI_Iscan);

extern "C" int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scan<false>(collective::Start::persistent(request, {{datatype, MPI_DATATYPE_NULL}, op}),
                     sendbuf, recvbuf, count, datatype, op, comm, "MPI_Scan_init");
}
WEFT_MPI_ALIAS(MPI_Scan_init);

extern "C" int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scan<true>(collective::Start{}, sendbuf, recvbuf, count, datatype, op, comm, "MPI_Exscan");
}
WEFT_MPI_ALIAS(MPI_Exscan);

extern "C" int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scan<true>(collective::Start::nonblocking(request, {{datatype, MPI_DATATYPE_NULL}, op}),
                    sendbuf, recvbuf, count, datatype, op, comm, "MPI_Iexscan");
}
WEFT_MPI_ALIAS(MPI_Iexscan);

extern "C" int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info,
                                MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scan<true>(collective::Start::persistent(request, {{datatype, MPI_DATATYPE_NULL}, op}),
                    sendbuf, recvbuf, count, datatype, op, comm, "MPI_Exscan_init");
}
WEFT_MPI_ALIAS(MPI_Exscan_init);
