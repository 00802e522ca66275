// A point-to-point operation in flight: MPI_Request. Blocking calls keep theirs on the stack;
// nonblocking ones take one from the issuing rank's pool. A send that waits for its receive
// (rendezvous) lends the receiver's engine its embedded message, whose payload is the send's own
// buffer: the receiver copies straight from it and then completes the send.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "comm/communicator.h"
#include "datatype/datatype.h"
#include "datatype/keep_alive.h"
#include "init/caller.h"
#include "mpi.h"
#include "pt2pt/message.h"
#include "request/completion.h"
#include "request/shared_copy.h"
#include "weft/detail/spin_lock.h"

struct weft_mpi_request;

namespace weft::mpi {

// The message a rendezvous send lends the receiver's engine: its payload is the sender's buffer.
struct RendezvousMessage : weft_mpi_message {
  weft_mpi_request* request = nullptr;
};

namespace nbc {
class Instance;
}

// `collective`: a nonblocking or persistent collective (mpi/coll/nbc.h).
// `generalized`: MPI_Grequest_start's (mpi/request/generalized.h).
enum class RequestKind : std::uint8_t { send, recv, collective, generalized };
// Send modes. `buffered` is the internal send of a message that MPI_Bsend copied into the
// attached buffer; the user's own Bsend request completes at once.
enum class SendMode : std::uint8_t { standard, sync, ready, buffered };

class RequestPool;

}  // namespace weft::mpi

// The first cache line holds what the other side of a transfer touches: the completion word, the
// status it writes, the buffer it copies to or from and what it matches on. A request is aligned
// to a line so that two requests of a pool never share one.
struct alignas(64) weft_mpi_request {
  weft::mpi::Completion completion;
  MPI_Status status{};  // written by the completer before completion.complete()
  // The operation, as the user gave it. `buffer` is const for sends.
  void* buffer = nullptr;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  int count = 0;
  int peer = 0;  // dest or source, comm rank (MPI_PROC_NULL / MPI_ANY_SOURCE too)
  int tag = 0;
  std::uint32_t context = 0;  // comm->context, cached for matching

  weft_mpi_request* next = nullptr;  // posted-receive queue links
  weft_mpi_request* prev = nullptr;
  bool posted = false;  // in a posted-receive queue; guarded by that engine's lock
  weft::mpi::RequestKind kind = weft::mpi::RequestKind::send;
  weft::mpi::SendMode mode = weft::mpi::SendMode::standard;
  bool persistent = false;
  bool active = false;  // a persistent request between MPI_Start and its completion call
  MPI_Comm comm = MPI_COMM_NULL;
  int owner = -1;   // world rank that issued it
  int source = -1;  // the issuer's comm rank: a send's envelope names it

  weft::mpi::RendezvousMessage rendezvous;  // a send's message while it waits for its receive
  // The key of the message this send left queued in a rank of this process (its eager copy, or
  // for MPI_Ibsend the rendezvous message of its internal send), 0 when it left none.
  std::uint64_t queued_key = 0;
  void* bsend_block = nullptr;             // SendMode::buffered: its part of the attached buffer
  weft::mpi::RequestPool* pool = nullptr;  // null for a request on a stack
  // The derived datatypes and user operation the operation uses, until the request goes: the
  // program may free them as soon as the call returns.
  weft::mpi::KeepAlive keep;

  // RequestKind::collective: the instance the operation joined, and for a persistent collective
  // what MPI_Start does (join the next instance of its series and arrive in it).
  std::shared_ptr<weft::mpi::nbc::Instance> collective;
  std::function<void(weft_mpi_request&)> restart;
  // A collective without an instance (mpi/coll/pair_nbc.h, or between processes): its name.
  std::string_view spanning_call;
  // A send to another process that UCX failed (the peer went, its connection was cut): UCX's
  // reason, for the failure's message.
  std::string_view transport_failure;
  // What the operation reads while it runs and its caller made for it: the narrowed count arrays
  // of a large-count form (mpi/api/large_count.h). Released when the request is disposed of.
  std::shared_ptr<void> narrowed_arrays;
  // RequestKind::generalized: the program's callbacks.
  struct Generalized {
    MPI_Grequest_query_function* query = nullptr;
    MPI_Grequest_free_function* free = nullptr;
    MPI_Grequest_cancel_function* cancel = nullptr;
    void* extra_state = nullptr;
  } generalized;
  // A large copy into or out of this request's buffer, made by the other side while this
  // request's owner waits: the owner helps it (mpi/request/shared_copy.h). On its own lines, away
  // from the completion word the owner polls.
  alignas(64) weft::mpi::SharedCopy shared_copy;

  bool matches(const weft::mpi::Envelope& envelope) const {
    return weft::mpi::Pattern{context, peer, tag}.matches(envelope);
  }
};

namespace weft::mpi {

using Request = weft_mpi_request;

// Fills a request for an operation of `caller` (the arguments already checked).
void prepare(Request& request, RequestKind kind, SendMode mode, const void* buffer, int count,
             MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, const Caller& caller);

// Completes `request` with its status already written: wakes its waiter, or disposes of it when
// its owner has freed it (MPI_Request_free) or nobody owns it (internal Bsend sends).
void finish(Request& request);

// Free requests of one rank, kept for reuse: a nonblocking call allocates nothing in the steady
// state. Any thread may give one back (a completer disposes of a freed request).
class RequestPool {
 public:
  RequestPool() = default;
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;
  ~RequestPool();

  Request* get();
  void put(Request* request);

 private:
  static constexpr int kMaxFree = 256;
  detail::SpinLock lock_;
  Request* free_ = nullptr;  // linked through `next`
  int free_count_ = 0;
};

// Waits for `request` to complete, helping the large copy its completer may make meanwhile.
inline void wait(Request& request, SpinBudget& budget) {
  request.shared_copy.wait(request.completion, budget);
}

// Gives a request back to its pool (or leaves a stack one alone).
void dispose(Request* request);

}  // namespace weft::mpi
