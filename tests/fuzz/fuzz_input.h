// What the fuzz targets share: reading typed values off the fuzzer's bytes, and failing loudly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace weft::fuzz {

// Consumes the input from the front; once it runs out every read returns zeros, so a target
// never has to check the length.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  std::uint8_t byte() {
    if (rest_.empty()) return 0;
    const auto value = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return value;
  }
  // A value in [0, bound), bound >= 1.
  std::uint32_t below(std::uint32_t bound) {
    std::uint32_t value = 0;
    for (std::uint32_t span = bound - 1; span != 0; span >>= 8) value = value << 8 | byte();
    return value % bound;
  }
  bool flag() { return (byte() & 1) != 0; }
  std::string_view rest() const { return rest_; }
  bool empty() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// `text` cut at every `separator`.
inline std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// A broken invariant: printed, then abort() so that libFuzzer records the input as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

inline void require(bool condition, const std::string& what) {
  if (!condition) fail(what);
}

}  // namespace weft::fuzz
