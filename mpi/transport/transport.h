// The path between processes: one UCX context and worker per process, an endpoint to each peer
// process (made on first use), and UCX active messages whose header is the MPI envelope. An
// arriving message enters the destination rank's matching engine like a local one, so
// MPI_ANY_SOURCE, probes, ordering and truncation behave the same whichever process sent it.
//
// Small messages travel eagerly: the receiving engine copies them in (or straight into a matching
// receive). Large ones, and every synchronous-mode send, use UCX's rendezvous: the engine queues
// a descriptor, and the data moves into the receive buffer once a receive matches it, which is
// also when a synchronous send completes.
//
// UCX runs in serialized mode behind one lock: the weft threads that send, the I/O manager that
// polls the worker (an event source: poll = progress, block = the worker's event fd) and a
// receiver waiting for rendezvous data take turns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pt2pt/message.h"
#include "request/request.h"
#include "weft/bootstrap.h"

namespace weft::mpi {

class World;

class Transport {
 public:
  // Creates the worker and publishes its address through `bootstrap` (before the job's fence).
  // Messages of up to `eager_limit` bytes travel as eager active messages (mpi.remote_eager_limit).
  Transport(World& world, Bootstrap& bootstrap, std::size_t eager_limit);
  // Flushes what is still in flight and closes the endpoints; every process must have stopped
  // sending to this one (the job's closing fence).
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // After the bootstrap's fence: reads the peers' addresses and starts being polled.
  void connect(Bootstrap& bootstrap);
  // Before the closing fence: stops the I/O manager polling (its scheduler is about to end) and
  // sends whatever is queued.
  void quiesce();

  // Sends `send` to `dest_world_rank`, a rank of another process. The request completes when
  // its buffer may be reused (standard mode) or when the receive has matched (synchronous mode);
  // a failure in flight is reported through its status. Returns why UCX refused the send, or
  // an empty string. The message's key at the receiver (remote_message_key) goes to *queued_key
  // when not null, for cancel().
  std::string send(Request& send, int dest_world_rank, const Envelope& envelope,
                   std::uint64_t* queued_key = nullptr);
  // The longest message offered to UCX for immediate completion (send, send_now): only UCX's
  // short protocol completes at once, and on shared memory it must fit a 128-byte FIFO element
  // with the 40-byte header and UCX's own. A longer message would only be refused, for the cost
  // of a call, before it takes the queued path.
  static constexpr std::size_t kImmediateBytes = 52;
  // A message of at most kImmediateBytes contiguous bytes at `data`, in standard mode, to
  // `dest_world_rank` (a rank of another process): sent within the call when UCX copies it out at
  // once (true), with no request; false when UCX would queue or refuse it, the endpoint is not
  // made yet or messages are traced: nothing was sent, and send() does what it does with any
  // message.
  bool send_now(int dest_world_rank, const Envelope& envelope, const void* data);
  // Asks the process of `dest_world_rank` to withdraw the message with `key` from that rank's
  // unexpected queue, and waits for the answer: true when it was still there. A withdrawn
  // rendezvous message's send then completes (its data was never read).
  bool cancel(int dest_world_rank, std::uint64_t key);

  // Makes progress on the worker; true when something happened. Never waits for the lock.
  bool progress();
  // The same for a rank that waits or tests, which thereby polls the worker: while ranks do, the
  // I/O manager's spare kernel thread leaves the worker to them instead of blocking on it.
  bool progress_for_rank();

  // Receives a rendezvous message's data from `process` (`desc`: `wire_bytes` on the wire, of
  // which `bytes` are the message's) into `count` elements of `type` at `buffer` (what fits),
  // then calls done(bytes moved). Only from inside a message callback: the fetch starts once the
  // worker's progress call returns.
  void receive(int process, void* desc, std::size_t wire_bytes, std::size_t bytes, void* buffer,
               std::size_t count, const Datatype& type, std::function<void(std::size_t)> done);
  // The same from a rank thread, waiting for the data; returns the bytes moved.
  std::size_t receive_now(int process, void* desc, std::size_t wire_bytes, std::size_t bytes,
                          void* buffer, std::size_t count, const Datatype& type);
  // Drops a rendezvous message nobody received.
  void discard(void* desc);

  // What the deadlock report's termination detection compares between processes (mpi/diagnostics/):
  // the messages sent to each process and those taken in from each, in order; `busy` when UCX
  // still holds operations or arrivals this process has not finished with.
  struct Traffic {
    std::vector<std::uint64_t> sent;
    std::vector<std::uint64_t> received;
    bool busy = false;
  };
  Traffic traffic();

  // Defined in transport.cpp only; named there by its UCX callbacks.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft::mpi
