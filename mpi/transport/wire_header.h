// The envelope that travels before the data of every message between processes, and its decoder:
// what a UCX active message brings is checked here before the transport believes any of it. The
// decoder is a function of the bytes alone so that a fuzz target (tests/fuzz/wire_header_fuzz.cpp)
// can feed it what a broken or hostile peer would send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace weft::mpi {

struct WireHeader {
  // Counts the messages from one process to another, so that the receiver handles them in
  // sending order whatever order UCX's lanes deliver them in (MPI's non-overtaking rule).
  std::uint64_t sequence;
  std::uint64_t bytes;  // typed data of the message (a synchronous send carries one more)
  std::uint32_t context;
  std::int32_t source;  // comm rank of the sender
  std::int32_t tag;
  std::int32_t dest;     // world rank of the receiver
  std::int32_t process;  // the sending process
};

// What arrived: the header's bytes and the length of the data after it.
struct WireArrival {
  const void* header;
  std::size_t header_length;
  std::size_t data_length;
  bool rendezvous;
};

// The first thing that makes an arrival no message of the job.
enum class WireFault : std::uint8_t { none, header_length, process, data_length };

// Copies the header of `arrival` into `header` and checks it for a job of `processes` processes.
// Inline and without a reason: it runs for every message between processes, where a result that
// could carry a sentence cost the receive path more than the checks (wire_header_refusal words a
// fault).
inline WireFault decode_wire_header(const WireArrival& arrival, int processes, WireHeader& header) {
  if (arrival.header_length != sizeof(WireHeader)) return WireFault::header_length;
  std::memcpy(&header, arrival.header, sizeof header);
  if (header.process < 0 || header.process >= processes) return WireFault::process;
  // The receiver copies `bytes` out of what came, so a header announcing more than its data would
  // have it read past the message. An empty synchronous send carries one byte.
  const bool sync_empty = header.bytes == 0 && arrival.data_length == 1;
  if (arrival.data_length != header.bytes && !sync_empty) return WireFault::data_length;
  return WireFault::none;
}

// Why decode_wire_header refuses `arrival` in a job of `processes` processes: a sentence naming
// the field, its value and what was expected; empty when it accepts it.
std::string wire_header_refusal(const WireArrival& arrival, int processes);

}  // namespace weft::mpi
