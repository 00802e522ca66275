// MPI_Scatter and MPI_Scatterv. The root publishes where each member's block lies in its send
// buffer. For large blocks every member copies its own straight into its receive buffer; for
// small ones the last member to arrive copies them all inside the final phase, so that nobody
// waits for the root's publication. A block that does not fit is truncated and reported by its
// receiver, as a receive would; the final phase keeps the root's buffer valid until then.
#include "coll/collective.h"
#include "coll/collective_spanning.h"
#include "coll/inter_collective.h"
#include "coll/nbc.h"
#include "coll/pair_nbc.h"
#include "errhan/error.h"
#include "util/profiling.h"
#include "weft/trace.h"

using namespace weft::mpi;
using collective::Block;
using collective::Blocks;
using collective::Call;

namespace {

struct ScatterSide {
  Blocks send;  // significant at the root
  Block recv;
  int root = 0;
  bool in_place = false;  // the root's recvbuf is MPI_IN_PLACE
  bool copied = false;    // the member copied its block itself (or the root needs none)
  // Written by whoever copies into this member, read by it after the final phase.
  mutable collective::Truncation truncation;
};

// The nonblocking scatter: one piece per member, copying its block of the root's buffer into its
// own.
class ScatterOp : public nbc::Sided<ScatterSide> {
 public:
  using Sided::Sided;

 private:
  Work plan() override {
    root_ = of(0).root;
    return per_member([&](int r) { return of(r).recv.bytes(); });
  }
  int home(int index) const override { return index; }
  void run(int index) override {
    const ScatterSide& to = of(index);
    if (to.in_place) return;
    const Block from = of(root_).send.at(index);
    to.truncation.check(root_, from, to.recv);
    collective::transfer(from, to.recv);
  }
  int outcome(int rank, std::string* reason) const override {
    return of(rank).truncation.outcome(reason);
  }
  int root_ = 0;  // set by plan()
};

int scatter(const collective::Start& start, MPI_Comm comm, std::string_view function,
            const Blocks& send, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  if (spanning::spans(comm)) {
    const Block recv = spanning::own_block(recvbuf, recvcount, recvtype);
    return spanning::run(comm, function, start,
                         [=](int tag) { return spanning::scatter(send, recv, root, comm, tag); });
  }
  if (!start.blocking()) {
    const bool in_place = recvbuf == MPI_IN_PLACE;
    const Block recv =
        in_place ? Block{} : Block{recvbuf, static_cast<std::size_t>(recvcount), recvtype};
    if (start.mode == collective::Start::Mode::nonblocking && comm->size() == 2) {
      const int world_rank = caller_world_rank();
      const int me = comm->rank_of(world_rank);
      const collective::PairArguments arguments =
          collective::pair_scatter(me, root, send, recv, in_place);
      if (collective::takes_pair_nbc(*comm, collective::pair_bytes(arguments, me))) {
        return collective::issue_pair(comm, function, start, world_rank, me, arguments);
      }
    }
    return nbc::issue<ScatterOp>(comm, function, start,
                                 [send, recv, root, in_place](ScatterOp& op, int rank) {
                                   ScatterSide& side = op.side(rank);
                                   side.send = send;
                                   side.recv = recv;
                                   side.root = root;
                                   side.in_place = in_place;
                                 });
  }
  Call call(comm, function);
  const int me = call.rank();
  const int size = call.size();
  ScatterSide mine;
  mine.send = send;
  mine.recv = {recvbuf, static_cast<std::size_t>(recvcount), recvtype};
  if (me == root) {
    if (recvbuf != MPI_IN_PLACE) {
      mine.truncation.check(me, send.at(me), mine.recv);
      collective::transfer(send.at(me), mine.recv);
    }
    mine.copied = true;
  } else if (mine.recv.bytes() * static_cast<std::size_t>(size) > collective::kSerialCopyBytes) {
    const Block from = call.of<ScatterSide>(root).send.at(me);
    mine.truncation.check(root, from, mine.recv);
    collective::transfer(from, mine.recv);
    mine.copied = true;
  }
  call.publish(&mine);
  call.phase([&] {
    const Blocks& source = call.of<ScatterSide>(root).send;
    for (int r = 0; r < size; ++r) {
      const ScatterSide& side = call.of<ScatterSide>(r);
      if (side.copied) continue;
      side.truncation.check(root, source.at(r), side.recv);
      collective::transfer(source.at(r), side.recv);
    }
  });
  return mine.truncation.raise(comm, function);
}

// The receive side's checks (every member's, unless MPI_IN_PLACE at the root).
int check_recv(MPI_Comm comm, std::string_view function, const void* sendbuf, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root) {
  const bool is_root = comm->my_rank() == root;
  if (!is_root) {
    if (int rc = collective::check_not_in_place(comm, function, "recvbuf", recvbuf,
                                                "only as recvbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (recvbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  if (int rc = check_count(comm, function, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, recvcount, recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (!is_root) return MPI_SUCCESS;
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, recvcount > 0);
}

int scatter_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                  int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::scatter(start, function, sendbuf, sendcount, nullptr, nullptr, sendtype,
                              recvbuf, recvcount, recvtype, root, comm);
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  Blocks send;
  if (comm->my_rank() == root) {
    if (int rc = collective::check_not_in_place(comm, function, "sendbuf", sendbuf,
                                                "only as recvbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_count(comm, function, "sendcount", sendcount); rc != MPI_SUCCESS) return rc;
    if (int rc = check_datatype(comm, function, "sendtype", sendtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, sendcount, sendtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    send = Blocks::regular(sendbuf, sendcount, sendtype);
  }
  if (int rc = check_recv(comm, function, sendbuf, recvbuf, recvcount, recvtype, root);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return scatter(start, comm, function, send, recvbuf, recvcount, recvtype, root);
}

}  // namespace

extern "C" int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scatter_entry(collective::Start{}, "MPI_Scatter", sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Scatter);

extern "C" int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scatter_entry(collective::Start::nonblocking(request, {{sendtype, recvtype}, MPI_OP_NULL}),
                       "MPI_Iscatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                       root, comm);
}
WEFT_MPI_ALIAS(MPI_Iscatter);

extern "C" int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scatter_entry(collective::Start::persistent(request, {{sendtype, recvtype}, MPI_OP_NULL}),
                       "MPI_Scatter_init", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Scatter_init);

namespace {

int scatterv_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                   const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::scatter(start, function, sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                              recvcount, recvtype, root, comm);
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  Blocks send;
  if (comm->my_rank() == root) {
    const int size = comm->size();
    if (int rc = collective::check_not_in_place(comm, function, "sendbuf", sendbuf,
                                                "only as recvbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_counts(comm, function, "sendcounts", sendcounts, size);
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_displs(comm, function, "displs", displs); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_datatype(comm, function, "sendtype", sendtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_buffer_of(comm, function, "sendbuf", sendbuf, sendcounts, size,
                                             sendtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    send = Blocks::varying(sendbuf, sendcounts, displs, sendtype);
  }
  if (int rc = check_recv(comm, function, sendbuf, recvbuf, recvcount, recvtype, root);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return scatter(start, comm, function, send, recvbuf, recvcount, recvtype, root);
}

}  // namespace

extern "C" int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scatterv_entry(collective::Start{}, "MPI_Scatterv", sendbuf, sendcounts, displs, sendtype,
                        recvbuf, recvcount, recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Scatterv);

extern "C" int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scatterv_entry(
      collective::Start::nonblocking(request, {{sendtype, recvtype}, MPI_OP_NULL}), "MPI_Iscatterv",
      sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Iscatterv);

extern "C" int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                                  MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                                  MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return scatterv_entry(collective::Start::persistent(request, {{sendtype, recvtype}, MPI_OP_NULL}),
                        "MPI_Scatterv_init", sendbuf, sendcounts, displs, sendtype, recvbuf,
                        recvcount, recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Scatterv_init);
