// The NUMA copy cost model (weft/numa_copy.h): the constants, their cache, and the choice between
// a flat single copy and one staged copy per NUMA node.
#include "weft/numa_copy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "weft/error.h"

namespace weft::numa_copy {

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxFragment = std::size_t{1} << 20;
// The seed's best ring length (s = 4: -40..46 % against one slot).
constexpr int kSlots = 4;

bool parse_number(std::string_view text, double* value) {
  const std::string copy(text);
  char* end = nullptr;
  *value = std::strtod(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size() && *value >= 0 && std::isfinite(*value);
}

// Depth of a complete k-ary tree below its root holding `readers` nodes.
int depth(int readers, int arity) {
  int levels = 0;
  long long reached = 0, width = 1;
  while (reached < readers) {
    width *= arity;
    reached += width;
    ++levels;
  }
  return levels;
}

std::string ns_text(double ns) {
  std::ostringstream out;
  out.precision(3);
  if (ns >= 1e6) {
    out << ns / 1e6 << " ms";
  } else if (ns >= 1e3) {
    out << ns / 1e3 << " us";
  } else {
    out << ns << " ns";
  }
  return out.str();
}

}  // namespace

std::optional<Constants> Constants::parse(std::string_view text, const Constants& base) {
  Constants result = base;
  bool any = false;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view field = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t equals = field.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string_view name = field.substr(0, equals);
    double value = 0;
    if (!parse_number(field.substr(equals + 1), &value)) return std::nullopt;
    if (name == "local") {
      result.local_ns_per_byte = value;
    } else if (name == "remote") {
      result.remote_ns_per_byte = value;
    } else if (name == "link") {
      result.link_ns_per_byte = value;
    } else if (name == "notify") {
      result.notify_ns = value;
    } else if (name == "atomic") {
      result.atomic_ns = value;
    } else {
      return std::nullopt;
    }
    any = true;
  }
  if (!any) return std::nullopt;
  return result;
}

std::string Constants::format() const {
  std::ostringstream out;
  out.precision(4);
  out << "local=" << local_ns_per_byte << ",remote=" << remote_ns_per_byte
      << ",link=" << link_ns_per_byte << ",notify=" << notify_ns << ",atomic=" << atomic_ns;
  return out.str();
}

Constants seed_defaults() {
  constexpr double t = 1.0;
  return {t, 2 * t, t / 2, 50 * t, 10 * t, "the seed's model figures (notes/seeds.md, 001)"};
}

std::string cache_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/weft/numa-constants";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.cache/weft/numa-constants";
}

std::optional<Constants> read_cache(const std::string& path) {
  std::ifstream file(path);
  std::string line, source;
  std::optional<Constants> constants;
  while (std::getline(file, line)) {
    if (line.starts_with("# ")) {
      source = line.substr(2);
    } else if (!line.empty()) {
      constants = Constants::parse(line, seed_defaults());
    }
  }
  if (constants)
    constants->source = "measured (" + path + (source.empty() ? "" : ", " + source) + ")";
  return constants;
}

void write_cache(const std::string& path, const Constants& constants) {
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
  std::ofstream file(path, std::ios::trunc);
  file << "# " << constants.source << '\n' << constants.format() << '\n';
  file.close();
  if (!file) throw Error("cannot write the NUMA constants to " + path);
}

Constants effective(std::string_view setting) {
  Constants base = seed_defaults();
  if (std::optional<Constants> cached = read_cache(cache_path())) base = *cached;
  if (setting.empty()) return base;
  std::optional<Constants> set = Constants::parse(setting, base);
  if (!set) {
    throw Error(
        "mpi.coll_numa_constants '" + std::string(setting) +
        "' is not valid; expected fields such as "
        "'local=1,remote=2,link=0.5,notify=50,atomic=10' (nanoseconds, per byte for copies)");
  }
  set->source = "mpi.coll_numa_constants";
  return *set;
}

std::string_view to_string(Collective collective) {
  switch (collective) {
    case Collective::bcast:
      return "bcast";
    case Collective::reduce:
      return "reduce";
    case Collective::allreduce:
      return "allreduce";
    case Collective::allgather:
      return "allgather";
  }
  return "?";
}

std::string_view to_string(Algorithm algorithm) {
  return algorithm == Algorithm::flat ? "flat" : "staged";
}

int Layout::nodes() const {
  std::vector<int> seen;
  for (int node : node_of) {
    if (node < 0) return -1;
    if (std::find(seen.begin(), seen.end(), node) == seen.end()) seen.push_back(node);
  }
  return static_cast<int>(seen.size());
}

bool Layout::contiguous() const {
  std::vector<int> closed;
  for (std::size_t r = 0; r < node_of.size(); ++r) {
    if (r > 0 && node_of[r] != node_of[r - 1]) closed.push_back(node_of[r - 1]);
    if (std::find(closed.begin(), closed.end(), node_of[r]) != closed.end()) return false;
  }
  return true;
}

std::size_t fragment_size(std::size_t bytes, const Constants& c) {
  const double best = std::sqrt(static_cast<double>(bytes) * (c.notify_ns + c.atomic_ns) /
                                std::max(c.local_ns_per_byte, 1e-6));
  const auto pages = static_cast<std::size_t>(std::ceil(best / kPage));
  return std::clamp(pages * kPage, kPage, kMaxFragment);
}

int tree_arity(int readers, const Constants& c) {
  int best = 1;
  double best_ns = 0;
  for (int k = 1; k <= std::max(1, readers); ++k) {
    const double ns = depth(readers, k) * (c.notify_ns + k * c.atomic_ns);
    if (k == 1 || ns < best_ns) {
      best = k;
      best_ns = ns;
    }
  }
  return best;
}

Plan choose(Collective collective, std::size_t bytes, const Layout& layout, int root,
            bool commutative, const Constants& c, const std::vector<std::size_t>& block_bytes) {
  Plan plan;
  const int nodes = layout.nodes();
  if (nodes < 0) {
    plan.reason = "a member's NUMA node is unknown";
    return plan;
  }
  if (nodes <= 1) {
    plan.reason = "one NUMA node: the flat single copy";
    return plan;
  }
  // Members per node, and (Allgather) the bytes of the blocks each node holds.
  std::map<int, int> members;
  std::map<int, double> held;
  const int p = static_cast<int>(layout.node_of.size());
  for (int r = 0; r < p; ++r) {
    const int node = layout.node_of[static_cast<std::size_t>(r)];
    ++members[node];
    held[node] += block_bytes.empty()
                      ? static_cast<double>(bytes) / p
                      : static_cast<double>(block_bytes[static_cast<std::size_t>(r)]);
  }
  const double m = static_cast<double>(bytes);
  const double n = nodes;
  const double tl = c.local_ns_per_byte, tr = c.remote_ns_per_byte, tx = c.link_ns_per_byte;
  const double tw = c.notify_ns;
  int widest = 0;
  for (const auto& [node, count] : members) widest = std::max(widest, count);
  const int root_node = layout.node_of[static_cast<std::size_t>(std::clamp(root, 0, p - 1))];
  const double at_root = members[root_node];

  // The pipeline's shape, whatever the choice (mpi.coll_numa = staged runs it regardless).
  plan.fragment = std::min(fragment_size(bytes, c), std::max(bytes, kPage));
  plan.slots = kSlots;
  plan.arity = tree_arity(widest - 1, c);
  if (bytes < kMinStagedBytes) {
    plan.reason = "below " + std::to_string(kMinStagedBytes / 1024) +
                  " KiB: the last member to arrive copies for all, with no notification";
    return plan;
  }
  if (!commutative && !layout.contiguous()) {
    plan.reason = "a non-commutative operation over ranks not grouped by node";
    return plan;
  }
  switch (collective) {
    case Collective::bcast: {
      // Flat: every reader off the root's node pulls the whole message across the link.
      plan.flat_ns = tw + std::max(m * tr, (p - at_root) * m * tx);
      const double fragments = std::ceil(m / static_cast<double>(plan.fragment));
      const double tree = depth(widest - 1, plan.arity) * (tw + plan.arity * c.atomic_ns);
      // Staged: one leader per other node pulls it once; readers copy fragments locally meanwhile.
      plan.staged_ns = std::max({m * tr, (n - 1) * m * tx, m * tl}) +
                       std::min(static_cast<double>(plan.fragment), m) * tl +
                       fragments * (tw + c.atomic_ns) + tree;
      break;
    }
    case Collective::reduce:
    case Collective::allreduce: {
      const bool all = collective == Collective::allreduce;
      // Flat: the owner of each of p chunks reads it from every input (and writes every output).
      double slowest = 0, remote = 0;
      for (const auto& [node, count] : members) {
        slowest = std::max(slowest, (m / p) * (count * tl + (p - count) * tr));
        remote += count * (m / p) * (p - count);
      }
      plan.flat_ns = tw + (all ? 2 : 1) * std::max(slowest, remote * tx);
      // Staged: each node reduces its own inputs into a node partial (local reads), then the
      // partials are combined across nodes: at the root's node (Reduce), at every node and
      // copied out locally (Allreduce).
      const double combine =
          all ? (m / widest) * (tl + (n - 1) * tr) : (m / at_root) * (tl + (n - 1) * tr);
      const double link = (all ? n : 1) * (n - 1) * m * tx;
      plan.staged_ns = (all ? 3 : 2) * tw + m * tl + std::max(combine, link) + (all ? m * tl : 0);
      break;
    }
    case Collective::allgather: {
      double slowest_flat = 0, remote = 0, slowest_pull = 0;
      for (const auto& [node, count] : members) {
        const double local = held[node];
        slowest_flat = std::max(slowest_flat, local * tl + (m - local) * tr);
        remote += count * (m - local);
        slowest_pull = std::max(slowest_pull, (m - local) / count * tr);
      }
      plan.flat_ns = tw + std::max(slowest_flat, remote * tx);
      plan.staged_ns = 2 * tw + std::max(slowest_pull, (n - 1) * m * tx) + m * tl;
      break;
    }
  }
  if (plan.staged_ns < plan.flat_ns) {
    plan.algorithm = Algorithm::staged;
    plan.reason = "staged " + ns_text(plan.staged_ns) + " < flat " + ns_text(plan.flat_ns);
  } else {
    plan.reason = "flat " + ns_text(plan.flat_ns) + " <= staged " + ns_text(plan.staged_ns);
  }
  return plan;
}

}  // namespace weft::numa_copy
