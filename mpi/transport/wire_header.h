// The envelope that travels before the data of every message between processes, and its decoder:
// what a UCX active message brings is checked here before the transport believes any of it. The
// decoder is a function of the bytes alone so that a fuzz target (tests/fuzz/wire_header_fuzz.cpp)
// can feed it what a broken or hostile peer would send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

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

// The header of `arrival` in a job of `processes` processes, or why it cannot be a message of
// this job (a sentence naming the field, its value and what was expected).
std::variant<WireHeader, std::string> decode_wire_header(const WireArrival& arrival, int processes);

}  // namespace weft::mpi
