// The decoder of the envelope of messages between processes (mpi/transport/wire_header.h): what a
// broken or hostile peer sends is refused with a reason, never believed. Inputs found by
// tests/fuzz/wire_header_fuzz.cpp are kept here as cases.
#include "transport/wire_header.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace {

using weft::mpi::decode_wire_header;
using weft::mpi::WireArrival;
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

std::string refusal(const WireHeader& header, std::size_t data_length, bool rendezvous,
                    int processes = 2) {
  const auto decoded =
      decode_wire_header(WireArrival{&header, sizeof header, data_length, rendezvous}, processes);
  const std::string* reason = std::get_if<std::string>(&decoded);
  return reason != nullptr ? *reason : std::string();
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
  const auto decoded = decode_wire_header(WireArrival{&header, sizeof header - 4, 8, false}, 2);
  ASSERT_TRUE(std::holds_alternative<std::string>(decoded));
  EXPECT_NE(std::get<std::string>(decoded).find("header of"), std::string::npos);
  EXPECT_NE(refusal(header_of(8, 2), 8, false).find("sending process 2"), std::string::npos);
  EXPECT_NE(refusal(header_of(8, -1), 8, false).find("sending process -1"), std::string::npos);
}

// Found by wire_header_fuzz (corpus/wire_header_fuzz/regress_bytes_past_data): a header announcing
// more bytes than came made the receiving engine copy past the message's data.
TEST(WireHeader, DataShorterOrLongerThanAnnouncedIsRefused) {
  EXPECT_NE(refusal(header_of(0x00ffffffffffffff, 1), 0, false).find("announces"),
            std::string::npos);
  EXPECT_NE(refusal(header_of(4096, 1), 16, false).find("carries 16"), std::string::npos);
  EXPECT_NE(refusal(header_of(4096, 1), 100, true).find("rendezvous"), std::string::npos);
  EXPECT_NE(refusal(header_of(8, 1), 9, false), "");
}

}  // namespace
