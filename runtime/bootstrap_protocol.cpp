#include "bootstrap_protocol.h"

#include "weft/error.h"

namespace weft::bootstrap {
namespace {

void append_number(std::string& out, std::uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>(value >> shift));
}

std::uint32_t decode_number(std::string_view bytes) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[i]);
  return value;
}

}  // namespace

PayloadWriter& PayloadWriter::number(std::uint32_t value) {
  append_number(payload_, value);
  return *this;
}

PayloadWriter& PayloadWriter::text(std::string_view value) {
  append_number(payload_, static_cast<std::uint32_t>(value.size()));
  payload_.append(value);
  return *this;
}

std::string PayloadWriter::frame(FrameKind kind) const {
  std::string out;
  append_number(out, static_cast<std::uint32_t>(payload_.size()));
  out.push_back(static_cast<char>(kind));
  out.append(payload_);
  return out;
}

PayloadReader::PayloadReader(std::string_view payload, std::string_view what)
    : rest_(payload), what_(what) {}

std::uint32_t PayloadReader::number() {
  if (rest_.size() < 4) {
    throw Error("garbled " + what_ + ": it ends inside a number (" + std::to_string(rest_.size()) +
                " bytes left; expected 4)");
  }
  const std::uint32_t value = decode_number(rest_);
  rest_.remove_prefix(4);
  return value;
}

std::string PayloadReader::text() {
  const std::uint32_t size = number();
  if (size > rest_.size()) {
    throw Error("garbled " + what_ + ": a string of " + std::to_string(size) + " bytes with only " +
                std::to_string(rest_.size()) + " left in the frame");
  }
  std::string value(rest_.substr(0, size));
  rest_.remove_prefix(size);
  return value;
}

void PayloadReader::finish() const {
  if (!rest_.empty()) {
    throw Error("garbled " + what_ + ": " + std::to_string(rest_.size()) +
                " unexpected bytes at its end");
  }
}

std::optional<Frame> take_frame(std::string& buffer) {
  if (buffer.size() < kFrameHeader) return std::nullopt;
  const std::uint32_t size = decode_number(buffer);
  const auto kind = static_cast<unsigned char>(buffer[4]);
  if (kind < static_cast<unsigned char>(FrameKind::hello) ||
      kind > static_cast<unsigned char>(FrameKind::failure)) {
    throw Error("garbled frame: kind " + std::to_string(kind) + " is unknown; expected 1.." +
                std::to_string(static_cast<int>(FrameKind::failure)));
  }
  if (size > kMaxFramePayload) {
    throw Error("garbled frame: a " + std::string(to_string(static_cast<FrameKind>(kind))) +
                " frame of " + std::to_string(size) + " bytes; expected at most " +
                std::to_string(kMaxFramePayload));
  }
  if (buffer.size() < kFrameHeader + size) return std::nullopt;
  Frame frame{static_cast<FrameKind>(kind), buffer.substr(kFrameHeader, size)};
  buffer.erase(0, kFrameHeader + size);
  return frame;
}

std::string_view to_string(FrameKind kind) {
  switch (kind) {
    case FrameKind::hello:
      return "hello";
    case FrameKind::welcome:
      return "welcome";
    case FrameKind::put:
      return "put";
    case FrameKind::fence:
      return "fence";
    case FrameKind::fence_done:
      return "fence_done";
    case FrameKind::failure:
      return "failure";
  }
  return "unknown";
}

std::string hello_frame(std::string_view token, int process) {
  return PayloadWriter()
      .text(token)
      .number(static_cast<std::uint32_t>(process))
      .frame(FrameKind::hello);
}

std::string failure_frame(std::string_view message) {
  return PayloadWriter().text(message).frame(FrameKind::failure);
}

std::string fence_done_frame(const std::vector<Entry>& entries) {
  PayloadWriter writer;
  writer.number(static_cast<std::uint32_t>(entries.size()));
  for (const Entry& entry : entries) {
    writer.number(static_cast<std::uint32_t>(entry.process)).text(entry.key).text(entry.value);
  }
  return writer.frame(FrameKind::fence_done);
}

std::vector<Entry> read_fence_done(const Frame& frame) {
  PayloadReader reader(frame.payload, "fence_done frame");
  const std::uint32_t count = reader.number();
  std::vector<Entry> entries;
  for (std::uint32_t i = 0; i < count; ++i) {
    Entry entry;
    entry.process = static_cast<int>(reader.number());
    entry.key = reader.text();
    entry.value = reader.text();
    entries.push_back(std::move(entry));
  }
  reader.finish();
  return entries;
}

}  // namespace weft::bootstrap
