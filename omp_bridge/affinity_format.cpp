// OpenMP's thread affinity format (affinity-format-var, omp_capture_affinity and family): a
// printf-like string whose fields describe the calling OpenMP thread.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>

#include "omp.h"
#include "places.h"
#include "team.h"
#include "thread_state.h"
#include "weft/error.h"
#include "weft/sync.h"
#include "weft/this_thread.h"

namespace weft::omp {
namespace {

// affinity-format-var: one per device, and the host is weft's only device.
struct AffinityFormat {
  weft::Mutex mutex;
  // OMP_AFFINITY_FORMAT, else weft's default.
  std::string value = std::getenv("OMP_AFFINITY_FORMAT") != nullptr
                          ? std::getenv("OMP_AFFINITY_FORMAT")
                          : "level %L thread %i affinity %A";
};

AffinityFormat& affinity_format() {
  static AffinityFormat format;
  return format;
}

std::string current_format() {
  AffinityFormat& format = affinity_format();
  const std::lock_guard lock(format.mutex);
  return format.value;
}

// The processors the caller may run on: its place's when it is bound, else every place's of its
// rank, in increasing order.
std::string affinity_list(ThreadState& self) {
  const std::vector<Place> places = rank_places(*self.vps);
  const int bound = omp_get_place_num();
  std::vector<int> processors;
  for (std::size_t place = 0; place < places.size(); ++place) {
    if (bound >= 0 && static_cast<int>(place) != bound) continue;
    processors.insert(processors.end(), places[place].processors.begin(),
                      places[place].processors.end());
  }
  std::sort(processors.begin(), processors.end());
  processors.erase(std::unique(processors.begin(), processors.end()), processors.end());
  std::string list;
  // Appended piece by piece: prepending the separator to a temporary (",", + to_string) makes
  // GCC 12 at -O3 report a false -Wrestrict on the inlined insert.
  for (const int processor : processors) {
    if (!list.empty()) list += ',';
    list += std::to_string(processor);
  }
  return list;
}

// The field a one-letter or {long} name stands for, for the calling thread.
std::string field(ThreadState& self, std::string_view name) {
  const Team& team = self.team();
  if (name == "t" || name == "team_num") return std::to_string(self.league_num);
  if (name == "T" || name == "num_teams") return std::to_string(self.league_size);
  if (name == "L" || name == "nesting_level") return std::to_string(team.level);
  if (name == "n" || name == "thread_num") return std::to_string(self.num());
  if (name == "N" || name == "num_threads") return std::to_string(team.size);
  if (name == "a" || name == "ancestor_tnum") {
    return std::to_string(team.parent != nullptr ? team.parent_num : -1);
  }
  if (name == "H" || name == "host") {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
  }
  if (name == "P" || name == "process_id") return std::to_string(::getpid());
  if (name == "i" || name == "native_thread_id") return std::to_string(this_thread::id());
  if (name == "A" || name == "thread_affinity") return affinity_list(self);
  // OpenMP leaves an unknown field's text to the implementation; libomp's word for it.
  return "undefined";
}

// Expands `format`: %% is a percent sign; a field is %[0][.][width]<letter> or
// %[0][.][width]{name}, left-justified in `width` unless `.` (right-justified, with `0`
// zero-filled).
std::string expand(ThreadState& self, std::string_view format) {
  std::string out;
  for (std::size_t at = 0; at < format.size(); ++at) {
    if (format[at] != '%') {
      out += format[at];
      continue;
    }
    if (++at < format.size() && format[at] == '%') {
      out += '%';
      continue;
    }
    bool zero = false;
    bool right = false;
    if (at < format.size() && format[at] == '0') {
      zero = true;
      ++at;
    }
    if (at < format.size() && format[at] == '.') {
      right = true;
      ++at;
    }
    std::size_t width = 0;
    while (at < format.size() && format[at] >= '0' && format[at] <= '9') {
      width = width * 10 + static_cast<std::size_t>(format[at++] - '0');
    }
    std::string_view name;
    if (at < format.size() && format[at] == '{') {
      const std::size_t close = format.find('}', at);
      if (close == std::string_view::npos) {
        fatal("OpenMP affinity format \"" + std::string(format) + "\": a %{ without its }");
      }
      name = format.substr(at + 1, close - at - 1);
      at = close;
    } else if (at < format.size()) {
      name = format.substr(at, 1);
    } else {
      fatal("OpenMP affinity format \"" + std::string(format) + "\": ends inside a field");
    }
    const std::string value = field(self, name);
    const std::size_t pad = width > value.size() ? width - value.size() : 0;
    if (right && zero && !value.empty() && value[0] == '-') {
      // Zeros go after the sign, as printf's %0*d puts them.
      out += '-';
      out.append(pad, '0');
      out.append(value, 1);
    } else if (right) {
      out.append(pad, zero ? '0' : ' ');
      out += value;
    } else {
      out += value;
      out.append(pad, ' ');
    }
  }
  return out;
}

// Copies `text` into `buffer` of `size` bytes, cut and NUL-terminated; returns its length.
std::size_t copy_out(const std::string& text, char* buffer, std::size_t size) {
  if (buffer != nullptr && size > 0) {
    const std::size_t length = std::min(text.size(), size - 1);
    std::memcpy(buffer, text.data(), length);
    buffer[length] = '\0';
  }
  return text.size();
}

}  // namespace

void display_affinity_on_change(ThreadState& self) {
  // As libgomp and libomp: when the thread's nesting level, team size or affinity changed since
  // it last displayed (a new format alone does not display), and for every thread of a team whose
  // workers were placed anew (a new binding moves the team).
  const Team& team = self.team();
  std::string key =
      std::to_string(team.level) + ' ' + std::to_string(team.size) + ' ' + affinity_list(self);
  if (key == self.displayed_affinity && !team.display_all) return;
  self.displayed_affinity = std::move(key);
  std::string line = expand(self, current_format()) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void omp_set_affinity_format(const char* format) throw() {
  AffinityFormat& affinity = affinity_format();
  const std::lock_guard lock(affinity.mutex);
  affinity.value = format != nullptr ? format : "";
}

std::size_t omp_get_affinity_format(char* buffer, std::size_t size) throw() {
  return copy_out(current_format(), buffer, size);
}

// A null or empty format means affinity-format-var.
std::size_t omp_capture_affinity(char* buffer, std::size_t size, const char* format) throw() {
  const std::string chosen = format != nullptr && *format != '\0' ? format : current_format();
  return copy_out(expand(self(), chosen), buffer, size);
}

void omp_display_affinity(const char* format) throw() {
  const std::string chosen = format != nullptr && *format != '\0' ? format : current_format();
  const std::string line = expand(self(), chosen) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // extern "C"
