#include "icv.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "weft/error.h"

namespace weft::omp {

namespace {

std::string lower_trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

[[noreturn]] void refuse(const char* name, std::string_view value, std::string_view expected) {
  fatal(std::string(name) + "=\"" + std::string(value) + "\": expected " + std::string(expected));
}

std::optional<long long> parse_integer(std::string_view text) {
  const std::string trimmed = lower_trimmed(text);
  if (trimmed.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(trimmed.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

int parse_count(const char* name, std::string_view text, long long min, std::string_view what) {
  const std::optional<long long> value = parse_integer(text);
  if (!value || *value < min || *value > std::numeric_limits<int>::max()) refuse(name, text, what);
  return static_cast<int>(*value);
}

bool parse_bool(const char* name, std::string_view text) {
  const std::string value = lower_trimmed(text);
  if (value == "true") return true;
  if (value == "false") return false;
  refuse(name, text, "true or false");
}

Schedule parse_schedule(std::string_view text) {
  constexpr const char* name = "OMP_SCHEDULE";
  constexpr std::string_view expected =
      "[monotonic:|nonmonotonic:]static|dynamic|guided|auto[,chunk] with a positive chunk";
  std::string value = lower_trimmed(text);
  std::string_view rest = value;
  bool monotonic = false;
  if (const std::size_t colon = rest.find(':'); colon != std::string_view::npos) {
    const std::string modifier = lower_trimmed(rest.substr(0, colon));
    // Weft's dynamic and guided schedules hand out chunks in increasing order either way; the
    // modifier is kept for omp_get_schedule.
    if (modifier != "monotonic" && modifier != "nonmonotonic") refuse(name, text, expected);
    monotonic = modifier == "monotonic";
    rest.remove_prefix(colon + 1);
  }
  const std::vector<std::string_view> parts = split(rest, ',');
  if (parts.size() > 2) refuse(name, text, expected);
  const std::string kind = lower_trimmed(parts[0]);
  Schedule schedule;
  if (kind == "static") {
    schedule.kind = ScheduleKind::static_;
  } else if (kind == "dynamic") {
    schedule.kind = ScheduleKind::dynamic;
  } else if (kind == "guided") {
    schedule.kind = ScheduleKind::guided;
  } else if (kind == "auto") {
    schedule.kind = ScheduleKind::auto_;
  } else {
    refuse(name, text, expected);
  }
  schedule.chunk = parts.size() == 2 ? parse_count(name, parts[1], 1, expected) : 0;
  schedule.monotonic = monotonic;
  return schedule;
}

ProcBind parse_bind(std::string_view text, std::string_view whole) {
  const std::string value = lower_trimmed(text);
  if (value == "false") return ProcBind::false_;
  if (value == "true") return ProcBind::true_;
  if (value == "primary" || value == "master") return ProcBind::primary;
  if (value == "close") return ProcBind::close;
  if (value == "spread") return ProcBind::spread;
  refuse("OMP_PROC_BIND", whole,
         "true, false, or a comma-separated list of primary, master, close, spread");
}

// Reads OMP_PLACES's explicit list (OpenMP 5.1, 6.5): place intervals `{res,...}[:len[:stride]]`
// or `!{...}` (that place taken out of the list), a res being `n[:len[:stride]]` or `!n`.
class PlaceListParser {
 public:
  explicit PlaceListParser(std::string_view text) : text_(text) {}

  std::vector<std::vector<int>> parse() {
    std::vector<std::vector<int>> places;
    do {
      const bool exclude = take('!');
      const std::vector<int> place = parse_place();
      if (exclude) {
        std::erase(places, place);
        continue;
      }
      const auto [len, stride] = repetition();
      for (long i = 0; i < len; ++i) {
        std::vector<int> shifted;
        for (int id : place) shifted.push_back(processor(id + i * stride));
        std::sort(shifted.begin(), shifted.end());
        places.push_back(std::move(shifted));
      }
    } while (take(','));
    skip_space();
    if (at_ != text_.size()) bad();
    return places;
  }

 private:
  // ":len[:stride]" after a place or a processor number (1 and 1 without it).
  std::pair<long, long> repetition() {
    long len = 1;
    long stride = 1;
    if (take(':')) {
      len = number(1);
      if (take(':')) stride = number(std::numeric_limits<int>::min());
    }
    return {len, stride};
  }

  std::vector<int> parse_place() {
    if (!take('{')) bad();
    std::vector<int> place;
    do {
      if (take('!')) {
        std::erase(place, processor(number(0)));
        continue;
      }
      const long first = number(0);
      const auto [len, stride] = repetition();
      for (long i = 0; i < len; ++i) {
        const int id = processor(first + i * stride);
        if (std::find(place.begin(), place.end(), id) == place.end()) place.push_back(id);
      }
    } while (take(','));
    if (!take('}') || place.empty()) bad();
    std::sort(place.begin(), place.end());
    return place;
  }

  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  long number(long min) {
    skip_space();
    const std::size_t start = at_;
    if (at_ < text_.size() && (text_[at_] == '-' || text_[at_] == '+')) ++at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    const std::optional<long long> value = parse_integer(text_.substr(start, at_ - start));
    if (!value || *value < min || *value > std::numeric_limits<int>::max()) bad();
    return static_cast<long>(*value);
  }
  int processor(long id) {
    if (id < 0 || id > std::numeric_limits<int>::max()) bad();
    return static_cast<int>(id);
  }
  [[noreturn]] void bad() { refuse("OMP_PLACES", text_, kExpected); }

  static constexpr std::string_view kExpected =
      "threads, cores, ll_caches, sockets or numa_domains with an optional (count), or a list of "
      "places such as {0,1},{2,3} or {0:2}:2:2 (processor numbers, non-negative)";
  std::string_view text_;
  std::size_t at_ = 0;
};

PlaceSpec parse_places(std::string_view text) {
  PlaceSpec spec;
  spec.text = std::string(text);
  std::string value = lower_trimmed(text);
  if (!value.empty() && value.front() == '{') {
    spec.kind = PlaceKind::list;
    spec.list = PlaceListParser(text).parse();
    return spec;
  }
  if (const std::size_t open = value.find('('); open != std::string::npos) {
    if (value.back() != ')') PlaceListParser(text).parse();  // refuses it
    spec.count = parse_count("OMP_PLACES", value.substr(open + 1, value.size() - open - 2), 1,
                             "a positive count in name(count)");
    value = lower_trimmed(value.substr(0, open));
  }
  if (value == "cores" || value == "threads" || value == "ll_caches") {
    spec.kind = PlaceKind::core;
  } else if (value == "sockets" || value == "numa_domains") {
    spec.kind = PlaceKind::numa_node;
  } else {
    PlaceListParser(text).parse();  // refuses it, naming what is expected
  }
  return spec;
}

std::size_t parse_stack_size(std::string_view text) {
  constexpr std::string_view expected = "a positive size with an optional suffix B, K, M or G";
  std::string value = lower_trimmed(text);
  std::size_t unit = 1024;
  if (!value.empty() && std::isalpha(static_cast<unsigned char>(value.back()))) {
    switch (value.back()) {
      case 'b':
        unit = 1;
        break;
      case 'k':
        unit = 1024;
        break;
      case 'm':
        unit = 1024 * 1024;
        break;
      case 'g':
        unit = 1024 * 1024 * 1024;
        break;
      default:
        refuse("OMP_STACKSIZE", text, expected);
    }
    value.pop_back();
  }
  const std::optional<long long> count = parse_integer(value);
  if (!count || *count < 1 || static_cast<unsigned long long>(*count) > (1ULL << 40) / unit) {
    refuse("OMP_STACKSIZE", text, expected);
  }
  return static_cast<std::size_t>(*count) * unit;
}

std::string_view kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::static_:
      return "STATIC";
    case ScheduleKind::dynamic:
      return "DYNAMIC";
    case ScheduleKind::guided:
      return "GUIDED";
    case ScheduleKind::auto_:
      return "AUTO";
  }
  return "?";
}

std::string_view bind_name(ProcBind bind) {
  switch (bind) {
    case ProcBind::false_:
      return "FALSE";
    case ProcBind::true_:
      return "TRUE";
    case ProcBind::primary:
      return "PRIMARY";
    case ProcBind::close:
      return "CLOSE";
    case ProcBind::spread:
      return "SPREAD";
  }
  return "?";
}

void display(const GlobalIcvs& icvs) {
  // Appended piece by piece: GCC 12 at -O3 sees a false overlap (-Werror=restrict) in
  // std::string's operator+ on a temporary.
  std::string threads;
  for (int n : icvs.num_threads) {
    if (!threads.empty()) threads += ',';
    threads += std::to_string(n);
  }
  std::string bind;
  for (ProcBind b : icvs.proc_bind) {
    if (!bind.empty()) bind += ',';
    bind += bind_name(b);
  }
  std::fprintf(
      stderr,
      "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n"
      "  _OPENMP = '201511'\n"
      "  OMP_DYNAMIC = '%s'\n"
      "  OMP_NUM_THREADS = '%s'\n"
      "  OMP_SCHEDULE = '%s,%ld'\n"
      "  OMP_PROC_BIND = '%s'\n"
      "  OMP_PLACES = '%s'\n"
      "  OMP_STACKSIZE = '%zu'\n"
      "  OMP_WAIT_POLICY = '%s'\n"
      "  OMP_THREAD_LIMIT = '%d'\n"
      "  OMP_MAX_ACTIVE_LEVELS = '%d'\n"
      "  OMP_CANCELLATION = '%s'\n"
      "  OMP_MAX_TASK_PRIORITY = '%d'\n"
      "  OMP_DISPLAY_AFFINITY = '%s'\n"
      "  WEFT_OMP_RUNTIME = 'weft omp_bridge (GOMP and __kmpc ABIs on omp_worker threads)'\n"
      "OPENMP DISPLAY ENVIRONMENT END\n",
      icvs.dynamic ? "TRUE" : "FALSE", threads.empty() ? "the cores of the rank" : threads.c_str(),
      kind_name(icvs.run_schedule.kind).data(), icvs.run_schedule.chunk,
      bind.empty() ? "FALSE" : bind.c_str(),
      icvs.places.text.empty() ? "cores" : icvs.places.text.c_str(), icvs.stack_size,
      icvs.passive_wait ? "PASSIVE" : "ACTIVE", icvs.thread_limit, icvs.max_active_levels,
      icvs.cancellation ? "TRUE" : "FALSE", icvs.max_task_priority,
      icvs.display_affinity ? "TRUE" : "FALSE");
}

GlobalIcvs parse_environment() {
  GlobalIcvs icvs;
  icvs.run_schedule = {ScheduleKind::dynamic, 0};
  if (const char* text = std::getenv("OMP_NUM_THREADS")) {
    for (std::string_view part : split(text, ',')) {
      icvs.num_threads.push_back(parse_count(
          "OMP_NUM_THREADS", part, 1, "a positive integer or a comma-separated list of them"));
    }
  }
  if (const char* text = std::getenv("OMP_DYNAMIC")) icvs.dynamic = parse_bool("OMP_DYNAMIC", text);
  if (const char* text = std::getenv("OMP_PROC_BIND")) {
    for (std::string_view part : split(text, ',')) icvs.proc_bind.push_back(parse_bind(part, text));
  }
  // As OpenMP 5.0: nesting is on for as many levels as OMP_NUM_THREADS or OMP_PROC_BIND list.
  icvs.max_active_levels =
      static_cast<int>(std::max<std::size_t>({1, icvs.num_threads.size(), icvs.proc_bind.size()}));
  if (const char* text = std::getenv("OMP_NESTED")) {
    icvs.max_active_levels = parse_bool("OMP_NESTED", text) ? kSupportedActiveLevels : 1;
  }
  if (const char* text = std::getenv("OMP_MAX_ACTIVE_LEVELS")) {
    icvs.max_active_levels =
        std::min(kSupportedActiveLevels,
                 parse_count("OMP_MAX_ACTIVE_LEVELS", text, 0, "a non-negative integer"));
  }
  if (const char* text = std::getenv("OMP_THREAD_LIMIT")) {
    icvs.thread_limit = parse_count("OMP_THREAD_LIMIT", text, 1, "a positive integer");
  }
  if (const char* text = std::getenv("OMP_SCHEDULE")) icvs.run_schedule = parse_schedule(text);
  if (const char* text = std::getenv("OMP_PLACES")) icvs.places = parse_places(text);
  if (const char* text = std::getenv("OMP_STACKSIZE")) icvs.stack_size = parse_stack_size(text);
  if (const char* text = std::getenv("OMP_DISPLAY_AFFINITY")) {
    icvs.display_affinity = parse_bool("OMP_DISPLAY_AFFINITY", text);
  }
  if (const char* text = std::getenv("OMP_CANCELLATION")) {
    icvs.cancellation = parse_bool("OMP_CANCELLATION", text);
  }
  if (const char* text = std::getenv("OMP_MAX_TASK_PRIORITY")) {
    icvs.max_task_priority =
        parse_count("OMP_MAX_TASK_PRIORITY", text, 0, "a non-negative integer");
  }
  // Both policies wait the weft way: an adaptive spin, then the thread parks (nobody spins
  // forever on a core another thread could use).
  if (const char* text = std::getenv("OMP_WAIT_POLICY")) {
    const std::string value = lower_trimmed(text);
    if (value != "active" && value != "passive") {
      refuse("OMP_WAIT_POLICY", text, "active or passive");
    }
    icvs.passive_wait = value == "passive";
  }
  if (const char* text = std::getenv("OMP_DISPLAY_ENV")) {
    const std::string value = lower_trimmed(text);
    if (value != "true" && value != "false" && value != "verbose") {
      refuse("OMP_DISPLAY_ENV", text, "true, false or verbose");
    }
    if (value != "false") display(icvs);
  }
  return icvs;
}

}  // namespace

const GlobalIcvs& global_icvs() {
  static const GlobalIcvs icvs = parse_environment();
  return icvs;
}

void display_environment() {
  display(global_icvs());
}

Icvs Icvs::initial(int cores) {
  const GlobalIcvs& global = global_icvs();
  Icvs icvs;
  icvs.num_threads = global.num_threads.empty() ? cores : global.num_threads[0];
  icvs.dynamic = global.dynamic;
  icvs.max_active_levels = global.max_active_levels;
  icvs.thread_limit = global.thread_limit;
  icvs.run_schedule = global.run_schedule;
  icvs.proc_bind = global.proc_bind.empty() ? ProcBind::false_ : global.proc_bind[0];
  return icvs;
}

Icvs Icvs::for_team(int level) const {
  const GlobalIcvs& global = global_icvs();
  Icvs icvs = *this;
  const auto at = static_cast<std::size_t>(level);
  if (at < global.num_threads.size()) icvs.num_threads = global.num_threads[at];
  if (at < global.proc_bind.size()) icvs.proc_bind = global.proc_bind[at];
  return icvs;
}

}  // namespace weft::omp
