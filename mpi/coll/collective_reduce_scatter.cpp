// MPI_Reduce_scatter and MPI_Reduce_scatter_block. Every member publishes its input and reduces
// its own block over all inputs, in rank order. Without MPI_IN_PLACE it reduces straight into its
// result buffer, which nobody else reads; in place, its result buffer is its input, which others
// read until the phase, so the block is reduced aside and copied in after the phase.
#include <memory>
#include <optional>
#include <vector>

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

struct ReduceScatterSide : nbc::ReductionSide {
  std::size_t first = 0;  // the member's block of the elements
  std::size_t block = 0;
  bool in_place = false;
};

// The nonblocking reduce-scatter: one piece per member, reducing its block over every input in
// rank order. In place a member's result buffer is also an input the other pieces read, so the
// pieces reduce aside and the last one to finish copies every block in.
class ReduceScatterOp : public nbc::ReductionOp<ReduceScatterSide> {
 public:
  using ReductionOp::ReductionOp;

 private:
  Work plan() override {
    if (disagree(0)) return {};
    aside_.resize(static_cast<std::size_t>(size()));
    return {size(), of(0).bytes() * static_cast<std::size_t>(size())};
  }
  int home(int index) const override { return index; }
  void run(int index) override {
    const ReduceScatterSide& mine = of(index);
    void* acc = mine.output;
    if (mine.in_place) {
      aside_[static_cast<std::size_t>(index)] =
          std::make_unique<collective::Scratch>(mine.block, *mine.type);
      acc = aside_[static_cast<std::size_t>(index)]->data();
    }
    auto input = [&](int r) { return collective::element(of(r).input, mine.first, *mine.type); };
    collective::fold(size(), input, mine.block, mine.datatype, mine.op, acc);
  }
  void finish() override {
    for (int r = 0; r < size() && !aside_.empty(); ++r) {
      const ReduceScatterSide& side = of(r);
      if (!side.in_place || side.block == 0) continue;
      copy(aside_[static_cast<std::size_t>(r)]->data(), side.block, *side.type, side.output,
           side.block, *side.type);
    }
  }
  std::vector<std::unique_ptr<collective::Scratch>> aside_;
};

int reduce_scatter(const collective::Start& start, MPI_Comm comm, std::string_view function,
                   const void* sendbuf, void* recvbuf, std::size_t first, std::size_t count,
                   std::size_t total, MPI_Datatype datatype, MPI_Op op) {
  if (spanning::spans(comm)) {
    return spanning::run(comm, function, start, [=](int tag) {
      return spanning::reduce_scatter(sendbuf, recvbuf, first, count, total, datatype, op, comm,
                                      tag);
    });
  }
  if (!start.blocking()) {
    ReduceScatterSide mine;
    static_cast<nbc::ReductionSide&>(mine) =
        nbc::contribution(sendbuf, recvbuf, total, datatype, op, 0);
    mine.first = first;
    mine.block = count;
    mine.in_place = sendbuf == MPI_IN_PLACE;
    return nbc::issue<ReduceScatterOp>(
        comm, function, start,
        [mine](ReduceScatterOp& reduce, int rank) { reduce.side(rank) = mine; });
  }
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

int reduce_scatter_block_entry(const collective::Start& start, std::string_view function,
                               const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::reduce_scatter(start, function, sendbuf, recvbuf, recvcount, nullptr,
                                     datatype, op, comm);
  if (int rc = check_count(comm, function, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_common(comm, function, sendbuf, recvbuf, datatype, op); rc != MPI_SUCCESS) {
    return rc;
  }
  const int size = comm->size();
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, recvcount, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, recvcount, datatype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  const std::size_t count = static_cast<std::size_t>(recvcount);
  return reduce_scatter(start, comm, function, sendbuf, recvbuf,
                        count * static_cast<std::size_t>(comm->my_rank()), count,
                        count * static_cast<std::size_t>(size), datatype, op);
}

}  // namespace

extern "C" int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_scatter_block_entry(collective::Start{}, "MPI_Reduce_scatter_block", sendbuf,
                                    recvbuf, recvcount, datatype, op, comm);
}
WEFT_MPI_ALIAS(MPI_Reduce_scatter_block);

extern "C" int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                          MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_scatter_block_entry(
      collective::Start::nonblocking(request, {{datatype, MPI_DATATYPE_NULL}, op}),
      "MPI_Ireduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, comm);
}
WEFT_MPI_ALIAS(MPI_Ireduce_scatter_block);

extern "C" int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                              MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_scatter_block_entry(
      collective::Start::persistent(request, {{datatype, MPI_DATATYPE_NULL}, op}),
      "MPI_Reduce_scatter_block_init", sendbuf, recvbuf, recvcount, datatype, op, comm);
}
WEFT_MPI_ALIAS(MPI_Reduce_scatter_block_init);

namespace {

int reduce_scatter_entry(const collective::Start& start, std::string_view function,
                         const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::reduce_scatter(start, function, sendbuf, recvbuf, 0, recvcounts, datatype, op,
                                     comm);
  const int size = comm->size();
  if (int rc = collective::check_counts(comm, function, "recvcounts", recvcounts, size);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_common(comm, function, sendbuf, recvbuf, datatype, op); rc != MPI_SUCCESS) {
    return rc;
  }
  const int me = comm->my_rank();
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, recvcounts[me], datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = collective::check_buffer_of(comm, function, "sendbuf", sendbuf, recvcounts, size,
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
  return reduce_scatter(start, comm, function, sendbuf, recvbuf, first,
                        static_cast<std::size_t>(recvcounts[me]), total, datatype, op);
}

}  // namespace

extern "C" int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_scatter_entry(collective::Start{}, "MPI_Reduce_scatter", sendbuf, recvbuf,
                              recvcounts, datatype, op, comm);
}
WEFT_MPI_ALIAS(MPI_Reduce_scatter);

extern "C" int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_scatter_entry(
      collective::Start::nonblocking(request, {{datatype, MPI_DATATYPE_NULL}, op}),
      "MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
WEFT_MPI_ALIAS(MPI_Ireduce_scatter);

extern "C" int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info,
                                        MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_scatter_entry(
      collective::Start::persistent(request, {{datatype, MPI_DATATYPE_NULL}, op}),
      "MPI_Reduce_scatter_init", sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
WEFT_MPI_ALIAS(MPI_Reduce_scatter_init);
