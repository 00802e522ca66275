// MPI_Barrier: one phase of the call's meeting, or of two members, a post and a wait in the pair
// ring. MPI_Ibarrier: an instance with no work, complete when its last member arrives.
#include <cstring>

#include "coll/collective.h"
#include "coll/collective_spanning.h"
#include "coll/inter_collective.h"
#include "coll/nbc.h"
#include "coll/pair_nbc.h"
#include "coll/ring_call.h"
#include "errhan/error.h"
#include "util/profiling.h"
#include "weft/trace.h"
#include "weft/trace_message.h"
#include "weft/trace_team.h"

using namespace weft::mpi;

namespace {

class BarrierOp : public nbc::Instance {
 public:
  using Instance::Instance;

 private:
  Work plan() override { return {}; }
  int home(int) const override { return 0; }
  void run(int) override {}
};

// Two members: each posts its arrival in its slot of the call and returns once the other's is
// there. The slot's line is the only one the other member reads; a meeting also takes the
// communicator's meeting ring entry.
int pair_barrier(std::string_view function, MPI_Comm comm, int world_rank) {
  using collective::PairRing;
  collective::PairCall pair(comm, function, world_rank);
  PairRing::Slot& mine = pair.claim();
  // Only the kind is read of a barrier's slot (the signatures' check), and while a trace records
  // MPI calls the stamp of this member's arrival (its call's begin), on the slot's first line:
  // the other member's call cannot end before it, so its end reads no clock
  // (trace::received_after: 2 clock reads a barrier of two, not 4). A trace starts before any
  // rank runs, so both members of a call see the same trace::enabled.
  mine.header.kind = PairRing::Kind::barrier;
  const bool traced = weft::trace::enabled(weft::trace::Category::mpi);
  if (traced) [[unlikely]] {
    const std::uint64_t stamp = weft::trace::stamp();
    std::memcpy(mine.payload, &stamp, sizeof stamp);
  }
  pair.post(mine);
  const PairRing::Slot& other = pair.await(PairRing::Kind::barrier);
  std::uint64_t stamp = 0;
  // Read before consume(), after which the other member may reuse its slot.
  if (traced) [[unlikely]]
    std::memcpy(&stamp, other.payload, sizeof stamp);
  pair.consume();
  if (traced) [[unlikely]]
    weft::trace::received_after(stamp);
  return MPI_SUCCESS;
}

int barrier_entry(const collective::Start& start, std::string_view function, MPI_Comm comm) {
  // Looked up once for the checks and the ring (each lookup reads the current thread).
  const int world_rank = caller_world_rank();
  if (int rc = check_initialized(function, world_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function, world_rank); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter()) return intercoll::barrier(start, function, comm);
  if (spanning::spans(comm)) {
    return spanning::run(comm, function, start,
                         [=](int tag) { return spanning::barrier(comm, tag); });
  }
  if (start.mode == collective::Start::Mode::nonblocking && collective::takes_pair_nbc(*comm, 0)) {
    return collective::issue_pair(comm, function, start, world_rank, comm->rank_of(world_rank), {});
  }
  if (!start.blocking()) {
    return nbc::issue<BarrierOp>(comm, function, start, [](BarrierOp&, int) {});
  }
  if (collective::takes_pair_ring(*comm, 0)) return pair_barrier(function, comm, world_rank);
  collective::Call call(comm, function);
  if (!weft::trace::enabled(weft::trace::Category::mpi)) [[likely]] {
    call.phase();
    return MPI_SUCCESS;
  }
  // While a trace records MPI calls, the last member to arrive reads the clock before it lets
  // the others go: a time after every member's begin and before every member's end, which each
  // member notes as the bound of its end (trace::received_after), so that its end reads no clock
  // and is placed no earlier than that (n + 1 clock reads a barrier of n, not 2n). The members'
  // own last reads would not do: one may have begun after the last arrival's begin.
  std::uint64_t& stamp = call.trace_stamp();
  call.phase([&stamp] { stamp = weft::trace::read_stamp(); });
  weft::trace::received_after(stamp);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  // Ends right after the wait's return (trace::End::at_resume).
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1, 0,
                                     weft::trace::End::at_resume);
  return barrier_entry(collective::Start{}, "MPI_Barrier", comm);
}
WEFT_MPI_ALIAS(MPI_Barrier);

extern "C" int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return barrier_entry(collective::Start::nonblocking(request), "MPI_Ibarrier", comm);
}
WEFT_MPI_ALIAS(MPI_Ibarrier);

extern "C" int PMPI_Barrier_init(MPI_Comm comm, MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return barrier_entry(collective::Start::persistent(request), "MPI_Barrier_init", comm);
}
WEFT_MPI_ALIAS(MPI_Barrier_init);
