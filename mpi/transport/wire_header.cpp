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
  return header;
}

}  // namespace weft::mpi
