#include "coll/collective_spanning.h"

#include <deque>
#include <utility>
#include <vector>

#include "coll/collective_hierarchy.h"
#include "coll/nbc.h"
#include "coll/spanning_exchange.h"
#include "errhan/error.h"
#include "init/world.h"
#include "op/op.h"
#include "pt2pt/message.h"
#include "request/helper_thread.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft::mpi::spanning {

namespace {

using collective::element;
using collective::fold;
using collective::Scratch;

// dst = the fold, in rank order, of the contributions of members `from` to `to` - 1, `mine`
// being the caller's (me, in that range or not). Receives the others' first.
int reduce_range(Exchange& exchange, int from, int to, const void* mine, void* dst,
                 std::size_t count, MPI_Datatype type, MPI_Op op) {
  std::deque<Scratch> received;
  std::vector<const void*> inputs(static_cast<std::size_t>(to - from));
  for (int r = from; r < to; ++r) {
    if (r == exchange.me()) {
      inputs[r - from] = mine;
      continue;
    }
    received.emplace_back(count, *type);
    inputs[r - from] = received.back().data();
    exchange.receive(r, received.back().data(), count, type);
  }
  const int rc = exchange.wait();
  if (rc != MPI_SUCCESS || to == from) return rc;
  // The fold writes dst from the last input on: the caller's input must not be dst itself.
  Scratch own(count, *type);
  if (mine == dst && exchange.me() >= from && exchange.me() < to) {
    copy(mine, count, *type, own.data(), count, *type);
    inputs[exchange.me() - from] = own.data();
  }
  fold(
      to - from, [&](int r) { return inputs[static_cast<std::size_t>(r)]; }, count, type, op, dst);
  return MPI_SUCCESS;
}

// Reduces every member's `input` into `dst` at `root`.
int reduce_into(const void* input, void* dst, std::size_t count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, int tag) {
  Exchange exchange(comm, tag);
  if (exchange.me() != root) {
    exchange.send(root, input, count, type);
    return exchange.wait();
  }
  return reduce_range(exchange, 0, comm->size(), input, dst, count, type, op);
}

// Every member gets the reduction of every member's `input` in `output`.
int reduce_everywhere(const void* input, void* output, std::size_t count, MPI_Datatype type,
                      MPI_Op op, MPI_Comm comm, int tag) {
  if (reducible_in_groups(comm, op)) {
    return allreduce_in_groups(input, output, count, type, op, comm, tag);
  }
  // Groups interleave in rank order and `op` does not commute: one member folds everything.
  const int rc = reduce_into(input, output, count, type, op, 0, comm, tag);
  // Every member takes part in the broadcast, also when the fold failed at member 0: it then
  // broadcasts nothing, which every member reports as a mismatch instead of waiting for ever.
  const bool failed = comm->my_rank() == 0 && rc != MPI_SUCCESS;
  return first_failure(rc, bcast(output, failed ? 0 : static_cast<int>(count), type, 0, comm, tag));
}

}  // namespace

bool spans(MPI_Comm comm) {
  return comm->spans_processes;
}

// Tags only need to tell apart the calls that can be in flight at once on one communicator. Bit
// 29 is kNonblockingCollectiveTag's, set by run().
int tag_of(std::uint64_t number, std::uint64_t start) {
  constexpr std::uint64_t kStarts = std::uint64_t{1} << kCollectiveStartBits;
  return static_cast<int>((number * kStarts + start) & (kNonblockingCollectiveTag - 1));
}

std::string_view failure_text(int rc) {
  return rc == MPI_ERR_TRUNCATE ? "the members' data and the buffers that receive it differ in "
                                  "size, expected matching type signatures"
                                : "the exchange between processes failed";
}

int run(MPI_Comm comm, std::string_view function, const collective::Start& start, Body body) {
  if (!start.blocking()) {
    if (int rc = start.check(comm, function); rc != MPI_SUCCESS) return rc;
  }
  const std::uint64_t number = comm->local_of_caller().collectives++;
  if (start.blocking()) {
    BlockedCall blocked =
        blocked_in(BlockedCall::Kind::collective, function, comm, MPI_PROC_NULL, 0);
    blocked.collective = number;
    const BlockedScope scope(blocked);
    const int rc = body(tag_of(number, 0));
    if (rc == MPI_SUCCESS) return rc;
    return raise(comm, function, rc, failure_text(rc));
  }
  Request* request = nbc::new_request(comm);
  request->spanning_call = function;
  request->keep.hold(start.kept);
  // The exchange runs in a thread of the rank, on the rank's core. It starts at once, so that
  // its first messages leave during the call, and the caller goes on when it waits.
  // The thread waits as the blocking call would, under the same record: the deadlock report
  // proves and explains a nonblocking collective between processes as it does a blocking one.
  auto launch = [body, function, comm, number](Request& r, int tag) {
    spawn(helper_thread(r.owner, true), [body, &r, tag, function, comm, number] {
      {
        BlockedCall blocked =
            blocked_in(BlockedCall::Kind::collective, function, comm, MPI_PROC_NULL, 0);
        blocked.collective = number;
        const BlockedScope scope(blocked);
        r.status.MPI_ERROR = body(tag);
      }
      finish(r);
    }).detach();
  };
  if (start.is_persistent()) {
    request->persistent = true;
    request->restart = [launch, number, starts = std::uint64_t{0}](Request& r) mutable {
      launch(r, tag_of(number, starts++) | kNonblockingCollectiveTag);
    };
  } else {
    launch(*request, tag_of(number, 0) | kNonblockingCollectiveTag);
  }
  *start.request = request;
  return MPI_SUCCESS;
}

collective::Block own_block(const void* buffer, int count, MPI_Datatype type) {
  if (buffer == MPI_IN_PLACE) return {};
  return {const_cast<void*>(buffer), static_cast<std::size_t>(count), type};
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, int tag) {
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const auto n = static_cast<std::size_t>(count);
  if (reducible_in_groups(comm, op)) {
    return reduce_in_groups(input, recvbuf, n, type, op, root, comm, tag);
  }
  return reduce_into(input, recvbuf, n, type, op, root, comm, tag);
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, int tag) {
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  return reduce_everywhere(input, recvbuf, static_cast<std::size_t>(count), type, op, comm, tag);
}

int reduce_scatter(const void* sendbuf, void* recvbuf, std::size_t first, std::size_t count,
                   std::size_t total, MPI_Datatype type, MPI_Op op, MPI_Comm comm, int tag) {
  // Every member reduces the whole vector and keeps its part: no member knows the others' parts.
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  Scratch reduced(total, *type);
  if (int rc = reduce_everywhere(input, reduced.data(), total, type, op, comm, tag);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (count > 0) copy(element(reduced.data(), first, *type), count, *type, recvbuf, count, *type);
  return MPI_SUCCESS;
}

int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         int tag, bool inclusive) {
  Exchange exchange(comm, tag);
  const int me = exchange.me();
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const auto n = static_cast<std::size_t>(count);
  for (int r = me + 1; r < comm->size(); ++r) exchange.send(r, input, n, type);
  if (inclusive) return reduce_range(exchange, 0, me + 1, input, recvbuf, n, type, op);
  // Exscan: the caller's own input is not folded in, and rank 0's result is undefined.
  if (me == 0) return exchange.wait();
  return reduce_range(exchange, 0, me, nullptr, recvbuf, n, type, op);
}

}  // namespace weft::mpi::spanning
