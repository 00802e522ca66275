#include "collective_spanning.h"

#include <deque>
#include <utility>
#include <vector>

#include "error.h"
#include "nbc.h"
#include "op.h"
#include "p2p.h"
#include "weft/thread.h"
#include "world.h"

namespace weft::mpi::spanning {

namespace {

using collective::element;
using collective::fold;
using collective::Scratch;

// The point-to-point side of one collective call: its receives and sends, posted together in
// the communicator's collective context, then waited for together.
class Exchange {
 public:
  Exchange(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {
    caller_.world_rank = caller_world_rank();
    caller_.comm_rank = comm->my_rank();
    caller_.state = &caller_state();
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange() { wait(); }

  int me() const { return caller_.comm_rank; }
  void send(int to, const void* buffer, std::size_t count, MPI_Datatype type) {
    post(RequestKind::send, to, buffer, count, type);
  }
  void receive(int from, void* buffer, std::size_t count, MPI_Datatype type) {
    post(RequestKind::recv, from, buffer, count, type);
  }
  void send(int to, const collective::Block& block) {
    send(to, block.address, block.count, const_cast<MPI_Datatype>(block.type));
  }
  void receive(int from, const collective::Block& block) {
    receive(from, block.address, block.count, const_cast<MPI_Datatype>(block.type));
  }
  // Waits for everything posted; the first failure's class (a truncated receive, a send the
  // transport refused), else MPI_SUCCESS.
  int wait() {
    for (Request& request : requests_) {
      if (!request.completion.done()) weft::mpi::wait(request.completion, caller_.state->spin);
      if (request.status.MPI_ERROR != MPI_SUCCESS && failure_ == MPI_SUCCESS) {
        failure_ = request.status.MPI_ERROR;
      }
    }
    requests_.clear();
    return failure_;
  }

 private:
  void post(RequestKind kind, int peer, const void* buffer, std::size_t count, MPI_Datatype type) {
    Request& request = requests_.emplace_back();
    prepare(request, kind, SendMode::standard, buffer, static_cast<int>(count), type, peer, tag_,
            comm_, caller_);
    request.context = comm_->context + 1;
    if (int rc = start(request, "a collective between processes"); rc != MPI_SUCCESS) {
      requests_.pop_back();
      if (failure_ == MPI_SUCCESS) failure_ = rc;
    }
  }

  MPI_Comm comm_;
  int tag_;
  Caller caller_;
  std::deque<Request> requests_;
  int failure_ = MPI_SUCCESS;
};

// A local copy between two blocks; MPI_ERR_TRUNCATE when the source does not fit.
int copy_block(const collective::Block& from, const collective::Block& to) {
  collective::transfer(from, to);
  return from.bytes() > to.bytes() ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

int first_failure(int a, int b) {
  return a != MPI_SUCCESS ? a : b;
}

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

}  // namespace

bool spans(MPI_Comm comm) {
  return comm->spans_processes;
}

// Tags only need to tell apart the calls that can be in flight at once on one communicator.
int tag_of(std::uint64_t number, std::uint64_t start) {
  constexpr std::uint64_t kStarts = 1 << 12;
  return static_cast<int>((number * kStarts + start) & 0x3fffffff);
}

int run(MPI_Comm comm, std::string_view function, const collective::Start& start, Body body) {
  if (!start.blocking()) {
    if (int rc = start.check(comm, function); rc != MPI_SUCCESS) return rc;
  }
  const std::uint64_t number = comm->local_of_caller().collectives++;
  if (start.blocking()) {
    const int rc = body(tag_of(number, 0));
    if (rc == MPI_SUCCESS) return rc;
    return raise(comm, function, rc,
                 rc == MPI_ERR_TRUNCATE
                     ? "a member's data is larger than the buffer that receives it, expected "
                       "matching type signatures"
                     : "the exchange between processes failed");
  }
  Request* request = nbc::new_request(comm);
  // The exchange runs in a thread of the rank: the caller goes on while it progresses.
  auto launch = [body](Request& r, int tag) {
    ThreadAttr attr;
    attr.type = ThreadType::mpi_task;
    attr.rank = r.owner;
    spawn(attr, [body, &r, tag] {
      r.status.MPI_ERROR = body(tag);
      finish(r);
    }).detach();
  };
  if (start.is_persistent()) {
    request->persistent = true;
    request->restart = [launch, number, starts = std::uint64_t{0}](Request& r) mutable {
      launch(r, tag_of(number, starts++));
    };
  } else {
    launch(*request, tag_of(number, 0));
  }
  *start.request = request;
  return MPI_SUCCESS;
}

collective::Block own_block(const void* buffer, int count, MPI_Datatype type) {
  if (buffer == MPI_IN_PLACE) return {};
  return {const_cast<void*>(buffer), static_cast<std::size_t>(count), type};
}

int barrier(MPI_Comm comm, int tag) {
  Exchange exchange(comm, tag);
  const int size = comm->size();
  if (exchange.me() == 0) {
    for (int r = 1; r < size; ++r) exchange.receive(r, nullptr, 0, MPI_BYTE);
    if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
    for (int r = 1; r < size; ++r) exchange.send(r, nullptr, 0, MPI_BYTE);
  } else {
    exchange.send(0, nullptr, 0, MPI_BYTE);
    exchange.receive(0, nullptr, 0, MPI_BYTE);
  }
  return exchange.wait();
}

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, int tag) {
  Exchange exchange(comm, tag);
  if (exchange.me() == root) {
    for (int r = 0; r < comm->size(); ++r) {
      if (r != root) exchange.send(r, buffer, static_cast<std::size_t>(count), type);
    }
  } else {
    exchange.receive(root, buffer, static_cast<std::size_t>(count), type);
  }
  return exchange.wait();
}

int gather(const collective::Block& send, const collective::Blocks& recv, int root, MPI_Comm comm,
           int tag) {
  Exchange exchange(comm, tag);
  const int me = exchange.me();
  if (me != root) {
    exchange.send(root, send);
    return exchange.wait();
  }
  int rc = MPI_SUCCESS;
  for (int r = 0; r < comm->size(); ++r) {
    if (r != me) {
      exchange.receive(r, recv.at(r));
    } else if (send.address != nullptr) {
      rc = copy_block(send, recv.at(r));
    }
  }
  return first_failure(exchange.wait(), rc);
}

int scatter(const collective::Blocks& send, const collective::Block& recv, int root, MPI_Comm comm,
            int tag) {
  Exchange exchange(comm, tag);
  const int me = exchange.me();
  if (me != root) {
    exchange.receive(root, recv);
    return exchange.wait();
  }
  int rc = MPI_SUCCESS;
  for (int r = 0; r < comm->size(); ++r) {
    if (r != me) {
      exchange.send(r, send.at(r));
    } else if (recv.address != nullptr) {
      rc = copy_block(send.at(r), recv);
    }
  }
  return first_failure(exchange.wait(), rc);
}

int allgather(const collective::Block& send, const collective::Blocks& recv, MPI_Comm comm,
              int tag) {
  Exchange exchange(comm, tag);
  const int me = exchange.me();
  const collective::Block mine = recv.at(me);
  const int rc = send.address != nullptr ? copy_block(send, mine) : MPI_SUCCESS;
  // What the caller passed goes out, not its copy in its own block: a send larger than the
  // blocks then truncates at every reader, as in one process, instead of at the sender only.
  const collective::Block outgoing = send.address != nullptr ? send : mine;
  for (int r = 0; r < comm->size(); ++r) {
    if (r == me) continue;
    exchange.receive(r, recv.at(r));
    exchange.send(r, outgoing);
  }
  return first_failure(exchange.wait(), rc);
}

int alltoall(const collective::Blocks& send, const collective::Blocks& recv, bool in_place,
             MPI_Comm comm, int tag) {
  Exchange exchange(comm, tag);
  const int me = exchange.me();
  const int size = comm->size();
  // In place, what goes out is packed first: the receives overwrite the same blocks.
  std::vector<std::vector<char>> outgoing(in_place ? static_cast<std::size_t>(size) : 0);
  for (std::size_t r = 0; r < outgoing.size(); ++r) {
    if (static_cast<int>(r) == me) continue;
    const collective::Block block = recv.at(static_cast<int>(r));
    outgoing[r].resize(block.bytes());
    if (block.count > 0) pack(block.address, block.count, *block.type, outgoing[r].data());
  }
  int rc = MPI_SUCCESS;
  for (int r = 0; r < size; ++r) {
    if (r == me) {
      if (!in_place) rc = copy_block(send.at(r), recv.at(r));
      continue;
    }
    exchange.receive(r, recv.at(r));
    if (in_place) {
      exchange.send(r, {outgoing[r].data(), outgoing[r].size(), MPI_BYTE});
    } else {
      exchange.send(r, send.at(r));
    }
  }
  return first_failure(exchange.wait(), rc);
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, int tag) {
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  return reduce_into(input, recvbuf, static_cast<std::size_t>(count), type, op, root, comm, tag);
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, int tag) {
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  if (int rc = reduce_into(input, recvbuf, static_cast<std::size_t>(count), type, op, 0, comm, tag);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return bcast(recvbuf, count, type, 0, comm, tag);
}

int reduce_scatter(const void* sendbuf, void* recvbuf, std::size_t first, std::size_t count,
                   std::size_t total, MPI_Datatype type, MPI_Op op, MPI_Comm comm, int tag) {
  // Every member reduces the whole vector and keeps its part: no member knows the others' parts.
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  Scratch reduced(total, *type);
  if (int rc = reduce_into(input, reduced.data(), total, type, op, 0, comm, tag);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = bcast(reduced.data(), static_cast<int>(total), type, 0, comm, tag);
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
