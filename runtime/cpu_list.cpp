#include "weft/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "weft/error.h"

namespace weft {
namespace {

constexpr int kMaxCpu = 1 << 20;

std::string refused(std::string_view text, std::string_view part, std::string_view why) {
  return "cpu list '" + std::string(text) + "': '" + std::string(part) + "' " + std::string(why) +
         "; expected indices and ranges separated by commas, e.g. '0-3,8'";
}

int parse_index(std::string_view text, std::string_view part, std::string_view number) {
  int value = -1;
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() || value < 0 ||
      value > kMaxCpu) {
    throw Error(refused(text, part, "is not an index from 0 to " + std::to_string(kMaxCpu)));
  }
  return value;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    const std::size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      cpus.push_back(parse_index(text, part, part));
    } else {
      const int first = parse_index(text, part, part.substr(0, dash));
      const int last = parse_index(text, part, part.substr(dash + 1));
      if (first > last) throw Error(refused(text, part, "is a range whose end comes first"));
      for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<int>& sorted) {
  std::ostringstream out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (i > 0) out << ',';
    out << sorted[i];
    if (j > i) out << '-' << sorted[j];
    i = j + 1;
  }
  return out.str();
}

}  // namespace weft
