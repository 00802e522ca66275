// An incoming message as a rank's matching engine sees it: an envelope to match on and a payload
// that knows how to reach a receive buffer. The engine knows no transport; each kind of payload
// (a local eager copy, a local sender's own buffer, later a remote one) supplies its two
// operations (a remote rendezvous payload a third). A message matched by MPI_Mprobe is the
// MPI_Message handle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "datatype/datatype.h"
#include "mpi.h"

namespace weft::mpi {

struct Envelope {
  std::uint32_t context = 0;  // the communicator's point-to-point (or collective) context
  int source = 0;             // comm rank of the sender
  int tag = 0;
  std::size_t bytes = 0;  // typed data the sender sent
};

// Collective traffic between processes travels in a communicator's collective context (context + 1,
// odd) under tags whose bit 29 marks a nonblocking call's. A blocking call that meets a nonblocking
// one in another process then does not match its messages, and the engine, which holds both the
// message and the receive waiting for the other kind, ends the job (MPI-3.1 5.12) instead of
// letting both complete.
inline constexpr int kNonblockingCollectiveTag = 1 << 29;
inline bool is_collective_context(std::uint32_t context) {
  return (context & 1) != 0;
}
// A collective call's message; a collective context also carries the messages that make
// communicators (comm/intercomm.h), under tags outside 0..2^30-1.
inline bool is_collective_call_tag(std::uint32_t context, int tag) {
  return is_collective_context(context) && tag >= 0 && tag < (1 << 30);
}
// Below bit 12 of such a tag is a persistent call's start, above it the call's number (modulo
// 2^17, spanning::tag_of).
inline constexpr int kCollectiveStartBits = 12;
inline int call_of_tag(int tag) {
  return (tag & (kNonblockingCollectiveTag - 1)) >> kCollectiveStartBits;
}

// What a receive or a probe looks for; source and tag may be MPI_ANY_SOURCE / MPI_ANY_TAG.
struct Pattern {
  std::uint32_t context = 0;
  int source = 0;
  int tag = 0;

  bool matches(const Envelope& envelope) const {
    return envelope.context == context && (source == MPI_ANY_SOURCE || source == envelope.source) &&
           (tag == MPI_ANY_TAG || tag == envelope.tag);
  }
};

// The key of the message another process sent as its `sequence`th to this one: the engine's own
// keys stay below 2^44.
inline std::uint64_t remote_message_key(int process, std::uint64_t sequence) {
  return ((static_cast<std::uint64_t>(process) + 1) << 44) | sequence;
}

// The operations of one kind of payload; a table per kind, so a message costs one pointer.
struct PayloadOps {
  // Copies the message's data into `count` elements of `type` at `buffer` (what fits), returns
  // the bytes moved.
  std::size_t (*deliver)(weft_mpi_message& message, void* buffer, std::size_t count,
                         const Datatype& type);
  // The receiver is done with the message: the payload signals its sender (a rendezvous send
  // completes now) and releases what it holds. The message must not be touched afterwards.
  void (*release)(weft_mpi_message& message);
  // For a payload that cannot be copied on the spot (data still in another process): starts
  // the copy into `buffer` and calls done(bytes moved) when it is there, possibly on another
  // thread. Called by the engine while the payload's transport is delivering to it; nullptr for
  // payloads the engine never gets that way.
  void (*deliver_later)(weft_mpi_message& message, void* buffer, std::size_t count,
                        const Datatype& type, std::function<void(std::size_t)> done);
};

}  // namespace weft::mpi

struct weft_mpi_message {
  weft::mpi::Envelope envelope;
  const weft::mpi::PayloadOps* ops = nullptr;  // null only for MPI_MESSAGE_NO_PROC
  weft_mpi_message* next = nullptr;            // unexpected-queue links
  weft_mpi_message* prev = nullptr;
  bool queued = false;  // in an unexpected queue; guarded by that engine's lock
  // The key its sender's request keeps, so that MPI_Cancel can find and withdraw the message
  // while no receive has matched it (Engine::withdraw): from the engine's own count for a send of
  // this process, remote_message_key() for one from another process.
  std::uint64_t sender_key = 0;
  // Set by MPI_Mprobe, which takes the message out of the queue: errors of its MPI_Mrecv go to
  // this communicator's handler.
  MPI_Comm comm = MPI_COMM_NULL;

  std::size_t deliver(void* buffer, std::size_t count, const weft::mpi::Datatype& type) {
    return ops->deliver(*this, buffer, count, type);
  }
  void release() { ops->release(*this); }
};
