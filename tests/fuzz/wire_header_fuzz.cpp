// The envelope of a message between processes (mpi/transport/wire_header.h), as a broken or
// hostile peer could send it (its destination is checked against the ranks the process holds, by
// the transport). The input is a byte of flags, the data length, the number of
// processes, then the header's bytes. An accepted header must be one the transport can act on
// without reading outside what arrived: a sending process of the job and data of the length the
// header announces.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "transport/wire_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using weft::fuzz::require;
  weft::fuzz::Input input(data, size);
  const bool rendezvous = input.flag();
  std::size_t data_length = 0;
  for (int i = 0; i < 4; ++i) data_length = data_length << 8 | input.byte();
  const int processes = 1 + static_cast<int>(input.below(1024));
  // A copy of exactly the header's bytes, so that ASan sees any read past them.
  const std::string_view rest = input.rest();
  std::vector<char> header(rest.begin(), rest.end());
  const weft::mpi::WireArrival arrival{header.data(), header.size(), data_length, rendezvous};
  weft::mpi::WireHeader accepted;
  const weft::mpi::WireFault fault = weft::mpi::decode_wire_header(arrival, processes, accepted);
  const std::string refused = weft::mpi::wire_header_refusal(arrival, processes);
  if (fault != weft::mpi::WireFault::none) {
    require(!refused.empty(), "a refusal without a reason");
    return 0;
  }
  require(refused.empty(), "an accepted header with a reason to refuse it: " + refused);
  require(header.size() == sizeof(weft::mpi::WireHeader),
          "a header of " + std::to_string(header.size()) + " bytes was accepted");
  require(std::memcmp(&accepted, header.data(), sizeof accepted) == 0,
          "the decoded header differs from its bytes");
  require(accepted.process >= 0 && accepted.process < processes,
          "sending process " + std::to_string(accepted.process) + " of " +
              std::to_string(processes) + " accepted");
  // The receiver copies `bytes` out of what came (an eager message's data, or a rendezvous
  // message's once fetched); an empty synchronous send carries one byte.
  require(data_length == accepted.bytes || (accepted.bytes == 0 && data_length == 1),
          std::string(rendezvous ? "a rendezvous" : "an eager") + " message of " +
              std::to_string(data_length) + " bytes accepted with a header announcing " +
              std::to_string(accepted.bytes));
  return 0;
}
