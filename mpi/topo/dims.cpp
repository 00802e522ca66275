#include "topo/dims.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace weft::mpi {

namespace {

// The largest r with r^k <= n.
std::int64_t integer_root(std::int64_t n, int k) {
  auto power_at_most = [&](std::int64_t r) {
    std::int64_t p = 1;
    for (int i = 0; i < k; ++i) {
      p *= r;
      if (p > n) return false;
    }
    return true;
  };
  auto r = static_cast<std::int64_t>(std::pow(static_cast<double>(n), 1.0 / k));
  while (r > 1 && !power_at_most(r)) --r;
  while (power_at_most(r + 1)) ++r;
  return r < 1 ? 1 : r;
}

struct Search {
  std::vector<std::int64_t> divisors;  // of the whole, ascending
  std::vector<int> current;
  std::vector<int> best;
  std::int64_t best_spread = INT64_MAX;

  bool better(std::int64_t spread) const {
    if (spread != best_spread) return spread < best_spread;
    // Ties: the larger smallest extent, then the same again for the extents before it.
    for (std::size_t last = current.size() - 1; last > 0; --last) {
      if (current[last] != best[last]) return current[last] > best[last];
      const int a = current.front() - current[last - 1];
      const int b = best.front() - best[last - 1];
      if (a != b) return a < b;
    }
    return false;
  }

  // Chooses factors current[depth..] of `rest`, each at most `ceiling`.
  void run(std::int64_t rest, int depth, std::int64_t ceiling) {
    const int left = static_cast<int>(current.size()) - depth;
    if (left == 1) {
      if (rest > ceiling) return;
      current[static_cast<std::size_t>(depth)] = static_cast<int>(rest);
      const std::int64_t spread = current.front() - rest;
      if (better(spread)) {
        best_spread = spread;
        best = current;
      }
      return;
    }
    // Non-increasing factors of `rest`: the next one is at least the left-th root of rest.
    const std::int64_t root = integer_root(rest, left);
    if (depth == 0) {
      // The first factor is the largest, and the smallest of the others is at most the root of
      // what they share: the spread is at least f - that root, which grows with f.
      for (std::int64_t f : divisors) {
        if (f < root) continue;
        if (f - integer_root(rest / f, left - 1) > best_spread) break;
        current[0] = static_cast<int>(f);
        run(rest / f, 1, f);
      }
      return;
    }
    for (auto it = divisors.rbegin(); it != divisors.rend(); ++it) {
      const std::int64_t f = *it;
      if (f > ceiling || rest % f != 0) continue;
      if (f < root) break;
      if (current.front() - integer_root(rest / f, left - 1) > best_spread) continue;
      current[static_cast<std::size_t>(depth)] = static_cast<int>(f);
      run(rest / f, depth + 1, f);
    }
  }
};

}  // namespace

std::vector<int> balanced_dims(int nodes, int free_dims) {
  Search search;
  std::vector<std::int64_t> large;
  for (std::int64_t d = 1; d * d <= nodes; ++d) {
    if (nodes % d != 0) continue;
    search.divisors.push_back(d);
    if (d * d != nodes) large.push_back(nodes / d);
  }
  search.divisors.insert(search.divisors.end(), large.rbegin(), large.rend());
  search.current.assign(static_cast<std::size_t>(free_dims), 1);
  search.run(nodes, 0, nodes);
  return search.best;
}

}  // namespace weft::mpi
