#include "transport/wire_header.h"

namespace weft::mpi {

std::string wire_header_refusal(const WireArrival& arrival, int processes) {
  WireHeader header;
  const WireFault fault = decode_wire_header(arrival, processes, header);
  if (fault == WireFault::none) return {};
  if (fault == WireFault::header_length) {
    return "a message between processes came with a header of " +
           std::to_string(arrival.header_length) + " bytes, expected " +
           std::to_string(sizeof(WireHeader));
  }
  if (fault == WireFault::process) {
    return "a message between processes names sending process " + std::to_string(header.process) +
           ", which is not in the job";
  }
  return "a message from process " + std::to_string(header.process) + " announces " +
         std::to_string(header.bytes) + " bytes of data but carries " +
         std::to_string(arrival.data_length) + " (" +
         (arrival.rendezvous ? "rendezvous" : "eager") + ")";
}

}  // namespace weft::mpi
