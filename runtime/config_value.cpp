#include "config_value.h"

#include <array>
#include <cctype>
#include <charconv>
#include <limits>

namespace weft::config_value {
namespace {

struct Unit {
  std::string_view suffix;
  std::string_view binary_suffix;
  std::uint64_t bytes;
};

// Largest first, so that format_size picks the shortest text.
constexpr std::array<Unit, 4> kUnits = {{
    {"T", "TiB", std::uint64_t{1} << 40},
    {"G", "GiB", std::uint64_t{1} << 30},
    {"M", "MiB", std::uint64_t{1} << 20},
    {"K", "KiB", std::uint64_t{1} << 10},
}};

bool is_blank(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

template <typename Integer>
std::optional<Integer> parse_whole(std::string_view digits) {
  Integer value{};
  const char* end = digits.data() + digits.size();
  auto [stop, error] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  text = trim(text);
  // from_chars takes a minus sign but not a plus sign; people write both.
  if (text.starts_with('+') && !text.starts_with("+-")) text.remove_prefix(1);
  return parse_whole<std::int64_t>(text);
}

std::optional<bool> parse_boolean(std::string_view text) {
  text = trim(text);
  for (std::string_view yes : {"true", "yes", "on", "1"}) {
    if (equals_ignoring_case(text, yes)) return true;
  }
  for (std::string_view no : {"false", "no", "off", "0"}) {
    if (equals_ignoring_case(text, no)) return false;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  text = trim(text);
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::optional<std::uint64_t> number = parse_whole<std::uint64_t>(text.substr(0, digits));
  if (!number) return std::nullopt;
  std::string_view suffix = trim(text.substr(digits));
  if (suffix.empty() || equals_ignoring_case(suffix, "B")) return number;
  for (const Unit& unit : kUnits) {
    if (!equals_ignoring_case(suffix, unit.suffix) &&
        !equals_ignoring_case(suffix, unit.binary_suffix)) {
      continue;
    }
    if (*number > std::numeric_limits<std::uint64_t>::max() / unit.bytes) return std::nullopt;
    return *number * unit.bytes;
  }
  return std::nullopt;
}

std::string format_size(std::uint64_t bytes) {
  for (const Unit& unit : kUnits) {
    if (bytes != 0 && bytes % unit.bytes == 0) {
      return std::to_string(bytes / unit.bytes).append(unit.suffix);
    }
  }
  return std::to_string(bytes);
}

}  // namespace weft::config_value
