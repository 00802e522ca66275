// The message events of a trace (trace.events=message): each point-to-point message as a flow
// from its send to the receive that matched it, with what an OTF2 MpiSend / MpiRecv record needs.
// Recorded by the MPI layer's matching engine and transport; kept apart from weft/trace.h, which
// the scheduler's headers bring into every file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

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
// The id of the `sequence`th message from process `from` to process `to`, which both compute.
inline std::uint64_t remote_message_id(int from, int to, std::uint64_t sequence) noexcept {
  return std::uint64_t{1} << 63 | static_cast<std::uint64_t>(from & 0xfff) << 51 |
         static_cast<std::uint64_t>(to & 0xfff) << 39 | (sequence & ((std::uint64_t{1} << 39) - 1));
}
// This process's index among the job's processes (0 until the transport between processes sets
// it), for remote_message_id.
void set_process(int process) noexcept;
int process() noexcept;
// message_sent and message_matched are called by a rank inside its MPI call (the send; the
// receive that takes a queued message), whose span bounds their time: they read no clock while
// MPI calls are recorded. message_arrived is the receive's end recorded where the transport hands
// a message to a posted receive, outside any call of the receiver, and reads the clock.
void message_sent(std::uint64_t id, const MessageInfo& message) noexcept;
void message_matched(std::uint64_t id, const MessageInfo& message) noexcept;
void message_arrived(std::uint64_t id, const MessageInfo& message) noexcept;
// The id of a message queued at `message` (an address no other queued message has), in this
// process.
std::uint64_t local_message_id(const void* message) noexcept;
// A send that met its posted receive: both ends at once, in one record of the sender's call (no
// clock read while MPI calls are recorded), under a new id, at `stamp` (message_stamp, taken
// before the receiver could go on) where it is not 0 and MPI calls are recorded.
// `message.peer` is the receiver, `sender` the sender's rank in the communicator.
void message_delivered(const MessageInfo& message, int sender, std::uint64_t stamp) noexcept;

// A message's stamp, which a sender takes before it lets its receiver go on: the time of the
// calling kernel thread's last clock read (0 when it has none in this trace), so no later than
// now and no earlier than the begin of the call that sends. The receiver passes it to
// received_after once its receive has completed. Callers test enabled() first.
std::uint64_t message_stamp() noexcept;
// The calling thread's receive has just completed with a message stamped `stamp` (0: none). The
// span whose End::at_resume is recorded next on this kernel thread, with nothing recorded between,
// then reads no clock where the thread did not resume from a park: its end is untimed, placed
// when the trace is written between the timed records around it and no earlier than `stamp`.
// That takes a clock read off the path from a message's arrival to what the receiver does next
// (docs/observability.md). Callers test enabled() first.
void received_after(std::uint64_t stamp) noexcept;

// A communicator made by the job, whose messages name it by `context` (either of its two): its
// members' world ranks in comm rank order, for an intercommunicator the local group's and the
// remote group's (`remote`, empty for an intracommunicator); `self` for an MPI_COMM_SELF. Every
// process holding members of a communicator, and each side of an intercommunicator, may define
// it: the first definition of a context is kept. Not a hot path (a lock, a copy of the members).
// Callers test enabled(Category::message) first.
void define_communicator(std::uint32_t context, std::span<const int> members,
                         std::span<const int> remote, bool self) noexcept;

}  // namespace weft::trace
