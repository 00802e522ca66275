// The bootstrap exchange (runtime/bootstrap_protocol.h) as a broken or hostile peer speaks it. The
// input is a byte of flags, then a byte stream. The stream goes twice:
//  - through the frame decoder, fed in chunks as recv would: every frame taken must be whole and
//    within the size limit, and every payload its kind's reader accepts must encode back to the
//    same bytes;
//  - to a live BootstrapServer, as the bytes of one connection (after a valid hello when the flags
//    say so), closed at the end: the server must answer in whole frames and close its end.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "bootstrap_protocol.h"
#include "fuzz_input.h"
#include "weft/bootstrap_server.h"
#include "weft/error.h"

namespace {

namespace bootstrap = weft::bootstrap;
using bootstrap::FrameKind;
using bootstrap::PayloadReader;
using bootstrap::PayloadWriter;
using weft::fuzz::require;

// The bytes a reader of `frame`'s kind accepts, encoded again; nothing when it refuses them.
std::optional<std::string> reencode(const bootstrap::Frame& frame) {
  const std::string what(bootstrap::to_string(frame.kind));
  try {
    PayloadReader reader(frame.payload, what);
    std::string out;
    switch (frame.kind) {
      case FrameKind::hello: {
        const std::string token = reader.text();
        const std::uint32_t process = reader.number();
        reader.finish();
        return bootstrap::hello_frame(token, static_cast<int>(process));
      }
      case FrameKind::welcome: {
        const std::uint32_t processes = reader.number();
        reader.finish();
        return PayloadWriter().number(processes).frame(FrameKind::welcome);
      }
      case FrameKind::put: {
        const std::string key = reader.text();
        const std::string value = reader.text();
        reader.finish();
        return PayloadWriter().text(key).text(value).frame(FrameKind::put);
      }
      case FrameKind::fence:
        reader.finish();
        return PayloadWriter().frame(FrameKind::fence);
      case FrameKind::fence_done:
        return bootstrap::fence_done_frame(bootstrap::read_fence_done(frame));
      case FrameKind::failure: {
        const std::string message = reader.text();
        reader.finish();
        return bootstrap::failure_frame(message);
      }
    }
    weft::fuzz::fail("take_frame returned a frame of kind " +
                     std::to_string(static_cast<int>(frame.kind)));
  } catch (const weft::Error&) {
    return std::nullopt;
  }
}

void decode(std::string_view stream, std::size_t chunk) {
  std::string buffer;
  std::size_t offset = 0;  // of buffer's first byte in the stream
  while (!stream.empty() || !buffer.empty()) {
    const std::size_t take = std::min(chunk, stream.size());
    buffer.append(stream.substr(0, take));
    stream.remove_prefix(take);
    try {
      while (std::optional<bootstrap::Frame> frame = bootstrap::take_frame(buffer)) {
        const std::size_t length = bootstrap::kFrameHeader + frame->payload.size();
        require(frame->payload.size() <= bootstrap::kMaxFramePayload, "an oversized frame taken");
        offset += length;
        if (std::optional<std::string> again = reencode(*frame)) {
          std::string header;
          for (int shift = 0; shift < 32; shift += 8) {
            header.push_back(static_cast<char>(frame->payload.size() >> shift));
          }
          header.push_back(static_cast<char>(frame->kind));
          require(*again == header + frame->payload,
                  "a " + std::string(bootstrap::to_string(frame->kind)) + " frame at byte " +
                      std::to_string(offset - length) + " encodes back differently");
        }
      }
    } catch (const weft::Error&) {
      return;  // the connection would be refused here
    }
    if (take == 0) return;  // what is left is part of a frame
  }
}

std::string variable(const std::vector<std::string>& environment, std::string_view name) {
  for (const std::string& entry : environment) {
    if (entry.starts_with(name) && entry.size() > name.size() && entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  weft::fuzz::fail("the server's environment lacks " + std::string(name));
}

void converse(std::string_view stream, int processes, bool introduce) {
  weft::BootstrapServer server(processes);
  const std::vector<std::string> environment = server.environment(0);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  require(fd >= 0, "socket failed");
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = variable(environment, bootstrap::kSocketVariable);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  require(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0,
          "cannot connect to the server");
  // Read in a thread: a server answering while we still write must never block us both.
  std::string answers;
  std::thread reader([&] {
    char chunk[4096];
    ssize_t n;
    while ((n = ::recv(fd, chunk, sizeof chunk, 0)) > 0) answers.append(chunk, n);
  });
  std::string bytes;
  if (introduce) {
    bytes = bootstrap::hello_frame(variable(environment, bootstrap::kTokenVariable), 0);
  }
  bytes.append(stream);
  for (std::size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server refused the connection and closed it
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  reader.join();
  ::close(fd);
  // Everything the server says is a whole frame of a kind a process expects.
  while (!answers.empty()) {
    std::optional<bootstrap::Frame> frame;
    try {
      frame = bootstrap::take_frame(answers);
    } catch (const weft::Error& error) {
      weft::fuzz::fail(std::string("the server sent a garbled frame: ") + error.what());
    }
    require(frame.has_value(), "the server's answer ends inside a frame");
    require(frame->kind == FrameKind::welcome || frame->kind == FrameKind::fence_done ||
                frame->kind == FrameKind::failure,
            "the server sent a " + std::string(bootstrap::to_string(frame->kind)) + " frame");
    require(reencode(*frame).has_value(), "the server's " +
                                              std::string(bootstrap::to_string(frame->kind)) +
                                              " frame does not decode");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  weft::fuzz::Input input(data, size);
  const std::uint8_t flags = input.byte();
  const std::string_view stream = input.rest();
  decode(stream, 1 + (flags >> 3) * 7);
  converse(stream, 1 + (flags >> 1 & 1), (flags & 1) != 0);
  return 0;
}
