// MPI_Gather and MPI_Gatherv. The root publishes where each member's block goes. For large
// blocks every other member copies its send buffer straight into its block of the root's receive
// buffer, on all cores at once; for small ones the last member to arrive copies them all inside
// the final phase, so that nobody waits for the root's publication. Every sender's size is
// checked against its block there (the root reports truncation, as a receive would).
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

struct GatherSide {
  Block send;
  Blocks recv;  // significant at the root
  int root = 0;
  bool in_place = false;  // the root's sendbuf is MPI_IN_PLACE
  bool copied = false;    // the member wrote its block into the root's buffer itself
  // The root's, written in the final phase by the member checking every sender's size.
  mutable collective::Truncation truncation;
};

// The nonblocking gather: one piece per member, copying its block into the root's buffer; each
// records its own truncation, which the root reports.
class GatherOp : public nbc::Sided<GatherSide> {
 public:
  using Sided::Sided;

 private:
  Work plan() override {
    root_ = of(0).root;
    return per_member([&](int r) { return of(r).send.bytes(); });
  }
  int home(int index) const override { return index; }
  void run(int index) override {
    const GatherSide& from = of(index);
    if (index == root_ && from.in_place) return;
    const Block to = of(root_).recv.at(index);
    from.truncation.check(index, from.send, to);
    collective::transfer(from.send, to);
  }
  int outcome(int rank, std::string* reason) const override {
    if (rank != root_) return MPI_SUCCESS;
    for (int r = 0; r < size(); ++r) {
      if (of(r).truncation.failed()) return of(r).truncation.outcome(reason);
    }
    return MPI_SUCCESS;
  }
  int root_ = 0;  // set by plan()
};

int gather(const collective::Start& start, MPI_Comm comm, std::string_view function,
           const void* sendbuf, int sendcount, MPI_Datatype sendtype, const Blocks& recv,
           int root) {
  if (spanning::spans(comm)) {
    const Block send = spanning::own_block(sendbuf, sendcount, sendtype);
    return spanning::run(comm, function, start,
                         [=](int tag) { return spanning::gather(send, recv, root, comm, tag); });
  }
  if (!start.blocking()) {
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const Block send =
        in_place ? Block{}
                 : Block{const_cast<void*>(sendbuf), static_cast<std::size_t>(sendcount), sendtype};
    if (start.mode == collective::Start::Mode::nonblocking && comm->size() == 2) {
      const int world_rank = caller_world_rank();
      const int me = comm->rank_of(world_rank);
      const collective::PairArguments arguments =
          collective::pair_gather(me, root, send, recv, in_place);
      if (collective::takes_pair_nbc(*comm, collective::pair_bytes(arguments, me))) {
        return collective::issue_pair(comm, function, start, world_rank, me, arguments);
      }
    }
    return nbc::issue<GatherOp>(comm, function, start,
                                [send, recv, root, in_place](GatherOp& op, int rank) {
                                  GatherSide& side = op.side(rank);
                                  side.send = send;
                                  side.recv = recv;
                                  side.root = root;
                                  side.in_place = in_place;
                                });
  }
  Call call(comm, function);
  const int me = call.rank();
  const int size = call.size();
  GatherSide mine;
  mine.send = {const_cast<void*>(sendbuf), static_cast<std::size_t>(sendcount), sendtype};
  mine.recv = recv;
  if (me == root) {
    if (sendbuf != MPI_IN_PLACE) {
      mine.truncation.check(me, mine.send, recv.at(me));
      collective::transfer(mine.send, recv.at(me));
    }
  } else if (mine.send.bytes() * static_cast<std::size_t>(size) > collective::kSerialCopyBytes) {
    collective::transfer(mine.send, call.of<GatherSide>(root).recv.at(me));
    mine.copied = true;
  }
  call.publish(&mine);
  call.phase([&] {
    const GatherSide& target = call.of<GatherSide>(root);
    for (int r = 0; r < size; ++r) {
      if (r == root) continue;
      const GatherSide& side = call.of<GatherSide>(r);
      target.truncation.check(r, side.send, target.recv.at(r));
      if (!side.copied) collective::transfer(side.send, target.recv.at(r));
    }
  });
  return mine.truncation.raise(comm, function);
}

// The checks of the send side (every member's, unless MPI_IN_PLACE at the root), and the root's
// send buffer against its receive buffer.
int check_send(MPI_Comm comm, std::string_view function, const void* sendbuf, int sendcount,
               MPI_Datatype sendtype, const void* recvbuf, int root) {
  const bool is_root = comm->my_rank() == root;
  if (!is_root) {
    if (int rc = collective::check_not_in_place(comm, function, "sendbuf", sendbuf,
                                                "only as sendbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (sendbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  if (int rc = check_count(comm, function, "sendcount", sendcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "sendtype", sendtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, sendcount, sendtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (!is_root) return MPI_SUCCESS;
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, sendcount > 0);
}

int gather_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                 int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::gather(start, function, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                             nullptr, nullptr, recvtype, root, comm);
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_send(comm, function, sendbuf, sendcount, sendtype, recvbuf, root);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Blocks recv;
  if (comm->my_rank() == root) {
    if (int rc = check_count(comm, function, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
    if (int rc = check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_not_in_place(comm, function, "recvbuf", recvbuf,
                                                "only as sendbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, recvcount, recvtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    recv = Blocks::regular(recvbuf, recvcount, recvtype);
  }
  return gather(start, comm, function, sendbuf, sendcount, sendtype, recv, root);
}

}  // namespace

extern "C" int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return gather_entry(collective::Start{}, "MPI_Gather", sendbuf, sendcount, sendtype, recvbuf,
                      recvcount, recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Gather);

extern "C" int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return gather_entry(collective::Start::nonblocking(request, {{sendtype, recvtype}, MPI_OP_NULL}),
                      "MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                      root, comm);
}
WEFT_MPI_ALIAS(MPI_Igather);

extern "C" int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return gather_entry(collective::Start::persistent(request, {{sendtype, recvtype}, MPI_OP_NULL}),
                      "MPI_Gather_init", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                      root, comm);
}
WEFT_MPI_ALIAS(MPI_Gather_init);

namespace {

int gatherv_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                  int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::gather(start, function, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                             displs, recvtype, root, comm);
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_send(comm, function, sendbuf, sendcount, sendtype, recvbuf, root);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Blocks recv;
  if (comm->my_rank() == root) {
    const int size = comm->size();
    if (int rc = collective::check_counts(comm, function, "recvcounts", recvcounts, size);
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_displs(comm, function, "displs", displs); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_not_in_place(comm, function, "recvbuf", recvbuf,
                                                "only as sendbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_buffer_of(comm, function, "recvbuf", recvbuf, recvcounts, size,
                                             recvtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    recv = Blocks::varying(recvbuf, recvcounts, displs, recvtype);
  }
  return gather(start, comm, function, sendbuf, sendcount, sendtype, recv, root);
}

}  // namespace

extern "C" int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return gatherv_entry(collective::Start{}, "MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf,
                       recvcounts, displs, recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Gatherv);

extern "C" int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return gatherv_entry(collective::Start::nonblocking(request, {{sendtype, recvtype}, MPI_OP_NULL}),
                       "MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                       recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Igatherv);

extern "C" int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                                 MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return gatherv_entry(collective::Start::persistent(request, {{sendtype, recvtype}, MPI_OP_NULL}),
                       "MPI_Gatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                       displs, recvtype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Gatherv_init);
