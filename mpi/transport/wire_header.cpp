#include "transport/wire_header.h"

#include <cstring>

namespace weft::mpi {

std::variant<WireHeader, std::string> decode_wire_header(const WireArrival& arrival,
                                                         int processes) {
  if (arrival.header_length != sizeof(WireHeader)) {
    return "a message between processes came with a header of " +
           std::to_string(arrival.header_length) + " bytes, expected " +
           std::to_string(sizeof(WireHeader));
  }
  WireHeader header;
  std::memcpy(&header, arrival.header, sizeof header);
  if (header.process < 0 || header.process >= processes) {
    return "a message between processes names sending process " + std::to_string(header.process) +
           ", which is not in the job";
  }
  // The receiver copies `bytes` out of what came, so a header announcing more than its data would
  // have it read past the message.
  const bool sync_empty = header.bytes == 0 && arrival.data_length == 1;
  if (arrival.data_length != header.bytes && !sync_empty) {
    return "a message from process " + std::to_string(header.process) + " announces " +
           std::to_string(header.bytes) + " bytes of data but carries " +
           std::to_string(arrival.data_length) + " (" +
           (arrival.rendezvous ? "rendezvous" : "eager") + ")";
  }
  return header;
}

}  // namespace weft::mpi
