// The message events of a trace (trace.events=message): each point-to-point message as a flow
// from its send to the receive that matched it, with what an OTF2 MpiSend / MpiRecv record needs.
// Recorded by the MPI layer's matching engine and transport; kept apart from weft/trace.h, which
// the scheduler's headers bring into every file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/trace.h"

namespace weft::trace {

// Messages as flows: the sender records the start under an id the receiver also knows, the
// receiver (or whoever matches the receive) records the end with the same id. `peer` is the
// receiver's rank in the communicator at the start, the sender's at the end; `tag`, `bytes` (the
// message's length) and `context` (the communicator's point-to-point or collective context) are
// what an OTF2 MpiSend / MpiRecv record needs. Callers test enabled(Category::message) first.
struct MessageInfo {
  int peer;
  int tag;
  std::size_t bytes;
  std::uint32_t context;
};
void message_sent(std::uint64_t id, const MessageInfo& message) noexcept;
void message_matched(std::uint64_t id, const MessageInfo& message) noexcept;
// A send that met its posted receive: both ends at once (one clock read), under a new id.
// `message.peer` is the receiver, `sender` the sender's rank in the communicator.
void message_delivered(const MessageInfo& message, int sender) noexcept;

}  // namespace weft::trace
