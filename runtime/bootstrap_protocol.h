// The exchange between weftrun and the processes it starts (weftrun -p): frames on a Unix stream
// socket, each a 4-byte little-endian payload length, a 1-byte kind and the payload. Strings in a
// payload are a 4-byte length and the bytes; numbers are 4 bytes, little-endian.
//
//   process -> weftrun   hello(token, process)   first frame of a connection
//   weftrun -> process   welcome(processes)      the token and the index are accepted
//   process -> weftrun   put(key, value)
//   process -> weftrun   fence()
//   weftrun -> process   fence_done(entries)     once every process has reached the fence: all
//                                                 (process, key, value) put so far
//   weftrun -> process   failure(message)        the exchange cannot go on; weftrun closes
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::bootstrap {

// How weftrun tells a process where its exchange is (set by weftrun, read and removed by
// connect_bootstrap).
inline constexpr std::string_view kSocketVariable = "WEFT_INTERNAL_BOOTSTRAP_SOCKET";
inline constexpr std::string_view kTokenVariable = "WEFT_INTERNAL_BOOTSTRAP_TOKEN";
inline constexpr std::string_view kProcessVariable = "WEFT_INTERNAL_BOOTSTRAP_PROCESS";
inline constexpr std::string_view kProcessesVariable = "WEFT_INTERNAL_BOOTSTRAP_PROCESSES";

enum class FrameKind : std::uint8_t { hello = 1, welcome, put, fence, fence_done, failure };

// Larger frames are refused as garbled: the whole exchange of a job is addresses, a few hundred
// bytes per process.
inline constexpr std::uint32_t kMaxFramePayload = 64u << 20;
inline constexpr std::size_t kFrameHeader = 5;

struct Frame {
  FrameKind kind;
  std::string payload;
};

struct Entry {
  int process;
  std::string key;
  std::string value;
};

// Builds a payload.
class PayloadWriter {
 public:
  PayloadWriter& number(std::uint32_t value);
  PayloadWriter& text(std::string_view value);
  std::string frame(FrameKind kind) const;  // header and payload, ready to send

 private:
  std::string payload_;
};

// Reads a payload; throws weft::Error naming `what` (e.g. "hello frame") when it is too short or
// has bytes left over.
class PayloadReader {
 public:
  PayloadReader(std::string_view payload, std::string_view what);
  std::uint32_t number();
  std::string text();
  void finish() const;  // throws when bytes are left

 private:
  std::string_view rest_;
  std::string what_;
};

// Takes the first whole frame out of `buffer` (bytes received so far), or returns nothing when the
// buffer holds only part of one. Throws weft::Error for an unknown kind or an oversized length.
std::optional<Frame> take_frame(std::string& buffer);

std::string_view to_string(FrameKind kind);

std::string hello_frame(std::string_view token, int process);
std::string failure_frame(std::string_view message);
std::string fence_done_frame(const std::vector<Entry>& entries);
std::vector<Entry> read_fence_done(const Frame& frame);

}  // namespace weft::bootstrap
