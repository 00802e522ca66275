// The decoder of the envelope of messages between processes (mpi/transport/wire_header.h): what a
// broken or hostile peer sends is refused with a reason, never believed. Inputs found by
// tests/fuzz/wire_header_fuzz.cpp are kept here as cases.
#include "transport/wire_header.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {

using weft::mpi::decode_wire_header;
using weft::mpi::wire_header_refusal;
using weft::mpi::WireArrival;
using weft::mpi::WireFault;
using weft::mpi::WireHeader;

WireHeader header_of(std::uint64_t bytes, int process) {
  return {.sequence = 4,
          .bytes = bytes,
          .context = 2,
          .source = 1,
          .tag = 7,
          .dest = 0,
          .process = process};
}

WireFault fault_of(const WireArrival& arrival, int processes = 2) {
  WireHeader decoded{};
  const WireFault fault = decode_wire_header(arrival, processes, decoded);
  if (fault == WireFault::none) {
    EXPECT_EQ(std::memcmp(&decoded, arrival.header, sizeof decoded), 0)
        << "the decoded header differs from its bytes";
  }
  // The reason is given exactly for what the decoder refuses.
  EXPECT_EQ(wire_header_refusal(arrival, processes).empty(), fault == WireFault::none);
  return fault;
}

std::string refusal(const WireHeader& header, std::size_t data_length, bool rendezvous,
                    int processes = 2) {
  const WireArrival arrival{&header, sizeof header, data_length, rendezvous};
  fault_of(arrival, processes);
  return wire_header_refusal(arrival, processes);
}

TEST(WireHeader, MessagesOfTheJobAreAccepted) {
  EXPECT_EQ(refusal(header_of(16, 1), 16, false), "");
  EXPECT_EQ(refusal(header_of(1 << 20, 0), 1 << 20, true), "");
  // An empty synchronous send carries one byte.
  EXPECT_EQ(refusal(header_of(0, 1), 1, true), "");
  EXPECT_EQ(refusal(header_of(0, 1), 0, false), "");
}

TEST(WireHeader, AHeaderOfAnotherSizeOrProcessIsRefused) {
  const WireHeader header = header_of(8, 1);
  const WireArrival short_header{&header, sizeof header - 4, 8, false};
  EXPECT_EQ(fault_of(short_header), WireFault::header_length);
  EXPECT_NE(wire_header_refusal(short_header, 2).find("header of 36 bytes, expected 40"),
            std::string::npos);
  EXPECT_EQ(fault_of({&header, sizeof header, 8, false}, 1), WireFault::process);
  EXPECT_NE(refusal(header_of(8, 2), 8, false).find("sending process 2"), std::string::npos);
  EXPECT_NE(refusal(header_of(8, -1), 8, false).find("sending process -1"), std::string::npos);
}

// Found by wire_header_fuzz (corpus/wire_header_fuzz/regress_bytes_past_data): a header announcing
// more bytes than came made the receiving engine copy past the message's data.
TEST(WireHeader, DataShorterOrLongerThanAnnouncedIsRefused) {
  const WireHeader huge = header_of(0x00ffffffffffffff, 1);
  EXPECT_EQ(fault_of({&huge, sizeof huge, 0, false}), WireFault::data_length);
  EXPECT_NE(refusal(huge, 0, false).find("announces"), std::string::npos);
  EXPECT_NE(refusal(header_of(4096, 1), 16, false).find("carries 16"), std::string::npos);
  EXPECT_NE(refusal(header_of(4096, 1), 100, true).find("rendezvous"), std::string::npos);
  EXPECT_NE(refusal(header_of(8, 1), 9, false), "");
}

}  // namespace
