// MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw. Every member publishes where its block for each
// peer lies and copies its own row straight from every member's send buffer into its receive
// buffer. With MPI_IN_PLACE a member's receive buffer is also what it sends, and others would read
// blocks it is overwriting, so it publishes a packed copy of it instead. The final phase keeps
// every send buffer valid until the last reader is done.
#include <memory>
#include <vector>

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

// A packed copy of the blocks of `recv`, to send from in place.
class Snapshot {
 public:
  Snapshot(const Blocks& recv, int size) : offsets_(static_cast<std::size_t>(size) + 1, 0) {
    for (int r = 0; r < size; ++r) offsets_[r + 1] = offsets_[r] + recv.at(r).bytes();
    data_.reset(new std::byte[offsets_.back()]);
    for (int r = 0; r < size; ++r) {
      const Block block = recv.at(r);
      if (block.count > 0) pack(block.address, block.count, *block.type, data_.get() + offsets_[r]);
    }
  }
  Blocks blocks() const { return Blocks::packed(data_.get(), offsets_.data()); }

 private:
  std::vector<std::size_t> offsets_;
  std::unique_ptr<std::byte[]> data_;
};

struct AlltoallSide {
  Blocks send;
  Blocks recv;
  std::unique_ptr<Snapshot> snapshot;         // in place: what the member sends
  mutable collective::Truncation truncation;  // written by the piece that fills this member
};

// The nonblocking alltoall: one piece per member, pulling its row from every member's send
// buffer. At most one piece runs per progress thread (or per caller), which bounds the transfers
// in flight at once.
class AlltoallOp : public nbc::Sided<AlltoallSide> {
 public:
  using Sided::Sided;

 private:
  Work plan() override {
    return per_member([&](int r) {
      std::size_t bytes = 0;
      for (int s = 0; s < size(); ++s) bytes += of(r).recv.at(s).bytes();
      return bytes;
    });
  }
  int home(int index) const override { return index; }
  void run(int index) override {
    const AlltoallSide& to = of(index);
    for (int k = 0; k < size(); ++k) {
      const int r = (index + k) % size();
      const Block from = of(r).send.at(index);
      to.truncation.check(r, from, to.recv.at(r));
      collective::transfer(from, to.recv.at(r));
    }
  }
  int outcome(int rank, std::string* reason) const override {
    return of(rank).truncation.outcome(reason);
  }
};

int alltoall(const collective::Start& start, MPI_Comm comm, std::string_view function,
             const Blocks& send, const Blocks& recv, bool in_place) {
  if (spanning::spans(comm)) {
    return spanning::run(comm, function, start, [=](int tag) {
      return spanning::alltoall(send, recv, in_place, comm, tag);
    });
  }
  if (!start.blocking()) {
    if (start.mode == collective::Start::Mode::nonblocking && comm->size() == 2) {
      const int world_rank = caller_world_rank();
      const int me = comm->rank_of(world_rank);
      const collective::PairArguments arguments =
          collective::pair_alltoall(me, send, recv, in_place);
      if (collective::takes_pair_nbc(*comm, collective::pair_bytes(arguments, me))) {
        return collective::issue_pair(comm, function, start, world_rank, me, arguments);
      }
    }
    return nbc::issue<AlltoallOp>(comm, function, start,
                                  [send, recv, in_place](AlltoallOp& op, int rank) {
                                    AlltoallSide& side = op.side(rank);
                                    side.recv = recv;
                                    if (in_place) {
                                      // Taken at each start: the buffer holds what to send then.
                                      side.snapshot = std::make_unique<Snapshot>(recv, op.size());
                                      side.send = side.snapshot->blocks();
                                    } else {
                                      side.send = send;
                                    }
                                  });
  }
  Call call(comm, function);
  const int me = call.rank();
  const int size = call.size();
  std::unique_ptr<Snapshot> snapshot;
  if (in_place) snapshot = std::make_unique<Snapshot>(recv, size);
  const Blocks mine = in_place ? snapshot->blocks() : send;
  call.publish(&mine);
  collective::Truncation truncation;
  // Starting with the caller's own block spreads the readers over the members' buffers.
  for (int k = 0; k < size; ++k) {
    const int r = (me + k) % size;
    const Block from = call.of<Blocks>(r).at(me);
    truncation.check(r, from, recv.at(r));
    collective::transfer(from, recv.at(r));
  }
  call.phase();
  return truncation.raise(comm, function);
}

int check_start(MPI_Comm comm, std::string_view function, const void* sendbuf,
                const void* recvbuf) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (int rc =
          collective::check_not_in_place(comm, function, "recvbuf", recvbuf, "only as sendbuf");
      rc != MPI_SUCCESS) {
    return rc;
  }
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, true);
}

// Counts and displacements of one side of MPI_Alltoallv or MPI_Alltoallw.
int check_vectors(MPI_Comm comm, std::string_view function, const char* side, const int* counts,
                  const int* displs) {
  const std::string prefix(side);
  if (int rc = collective::check_counts(comm, function, prefix + "counts", counts, comm->size());
      rc != MPI_SUCCESS) {
    return rc;
  }
  return collective::check_displs(comm, function, prefix + "displs", displs);
}

int alltoall_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                   int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm) {
  if (int rc = check_start(comm, function, sendbuf, recvbuf); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::alltoall(start, function, Blocks::regular(sendbuf, sendcount, sendtype),
                               Blocks::regular(recvbuf, recvcount, recvtype), comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int rc = check_count(comm, function, "sendcount", sendcount); rc != MPI_SUCCESS) return rc;
    if (int rc = check_datatype(comm, function, "sendtype", sendtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, sendcount, sendtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (int rc = check_count(comm, function, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, recvcount, recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const Blocks send = in_place ? Blocks{} : Blocks::regular(sendbuf, sendcount, sendtype);
  return alltoall(start, comm, function, send, Blocks::regular(recvbuf, recvcount, recvtype),
                  in_place);
}

}  // namespace

extern "C" int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoall_entry(collective::Start{}, "MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Alltoall);

extern "C" int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoall_entry(
      collective::Start::nonblocking(request, {{sendtype, recvtype}, MPI_OP_NULL}), "MPI_Ialltoall",
      sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Ialltoall);

extern "C" int PMPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoall_entry(collective::Start::persistent(request, {{sendtype, recvtype}, MPI_OP_NULL}),
                        "MPI_Alltoall_init", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Alltoall_init);

namespace {

int alltoallv_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                    const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int rdispls[],
                    MPI_Datatype recvtype, MPI_Comm comm) {
  if (int rc = check_start(comm, function, sendbuf, recvbuf); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::alltoall(start, function,
                               Blocks::varying(sendbuf, sendcounts, sdispls, sendtype),
                               Blocks::varying(recvbuf, recvcounts, rdispls, recvtype), comm);
  const int size = comm->size();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int rc = check_vectors(comm, function, "send", sendcounts, sdispls); rc != MPI_SUCCESS) {
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
  }
  if (int rc = check_vectors(comm, function, "recv", recvcounts, rdispls); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_buffer_of(comm, function, "recvbuf", recvbuf, recvcounts, size,
                                           recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const Blocks send = in_place ? Blocks{} : Blocks::varying(sendbuf, sendcounts, sdispls, sendtype);
  return alltoall(start, comm, function, send,
                  Blocks::varying(recvbuf, recvcounts, rdispls, recvtype), in_place);
}

}  // namespace

extern "C" int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallv_entry(collective::Start{}, "MPI_Alltoallv", sendbuf, sendcounts, sdispls,
                         sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Alltoallv);

extern "C" int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallv_entry(
      collective::Start::nonblocking(request, {{sendtype, recvtype}, MPI_OP_NULL}),
      "MPI_Ialltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
      recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Ialltoallv);

extern "C" int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallv_entry(
      collective::Start::persistent(request, {{sendtype, recvtype}, MPI_OP_NULL}),
      "MPI_Alltoallv_init", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
      recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Alltoallv_init);

namespace {

int alltoallw_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                    const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[], const int rdispls[],
                    const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (int rc = check_start(comm, function, sendbuf, recvbuf); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::alltoall(start, function,
                               Blocks::typed(sendbuf, sendcounts, sdispls, sendtypes),
                               Blocks::typed(recvbuf, recvcounts, rdispls, recvtypes), comm);
  const int size = comm->size();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int rc = check_vectors(comm, function, "send", sendcounts, sdispls); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_types(comm, function, "sendtypes", sendtypes, sendcounts, size);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (int rc = check_vectors(comm, function, "recv", recvcounts, rdispls); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = collective::check_types(comm, function, "recvtypes", recvtypes, recvcounts, size);
      rc != MPI_SUCCESS) {
    return rc;
  }
  // No null-buffer check: byte displacements with absolute-address types go with MPI_BOTTOM.
  const Blocks send = in_place ? Blocks{} : Blocks::typed(sendbuf, sendcounts, sdispls, sendtypes);
  return alltoall(start, comm, function, send,
                  Blocks::typed(recvbuf, recvcounts, rdispls, recvtypes), in_place);
}

}  // namespace

extern "C" int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                              const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallw_entry(collective::Start{}, "MPI_Alltoallw", sendbuf, sendcounts, sdispls,
                         sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}
WEFT_MPI_ALIAS(MPI_Alltoallw);

extern "C" int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallw_entry(collective::Start::nonblocking(request), "MPI_Ialltoallw", sendbuf,
                         sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                         comm);
}
WEFT_MPI_ALIAS(MPI_Ialltoallw);

extern "C" int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   const MPI_Datatype sendtypes[], void* recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info,
                                   MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallw_entry(collective::Start::persistent(request), "MPI_Alltoallw_init", sendbuf,
                         sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                         comm);
}
WEFT_MPI_ALIAS(MPI_Alltoallw_init);
