#include "topo/grid_placement.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace weft::mpi {

namespace {

struct Box {
  std::vector<int> lo;
  std::vector<int> hi;  // exclusive

  long long cells() const {
    long long n = 1;
    for (std::size_t d = 0; d < lo.size(); ++d) n *= hi[d] - lo[d];
    return n;
  }
};

// Gives the cells of `box` to members order[first, first + box.cells()).
void bisect(const Box& box, const std::vector<int>& dims, const std::vector<int>& order,
            std::size_t first, std::vector<int>& new_rank) {
  std::size_t widest = 0;
  for (std::size_t d = 1; d < dims.size(); ++d) {
    if (box.hi[d] - box.lo[d] > box.hi[widest] - box.lo[widest]) widest = d;
  }
  const int extent = dims.empty() ? 1 : box.hi[widest] - box.lo[widest];
  if (extent <= 1) {
    // One cell: the row-major rank of its corner.
    int rank = 0;
    for (std::size_t d = 0; d < dims.size(); ++d) rank = rank * dims[d] + box.lo[d];
    new_rank[static_cast<std::size_t>(order[first])] = rank;
    return;
  }
  Box low = box;
  Box high = box;
  low.hi[widest] = high.lo[widest] = box.lo[widest] + extent / 2;
  bisect(low, dims, order, first, new_rank);
  bisect(high, dims, order, first + static_cast<std::size_t>(low.cells()), new_rank);
}

}  // namespace

std::vector<int> place_in_grid(const std::vector<int>& dims,
                               const std::vector<RankLocation>& locations) {
  std::vector<int> order(locations.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const RankLocation& x = locations[static_cast<std::size_t>(a)];
    const RankLocation& y = locations[static_cast<std::size_t>(b)];
    return std::tie(x.process, x.numa, x.core) < std::tie(y.process, y.numa, y.core);
  });
  std::vector<int> new_rank(locations.size(), -1);
  if (locations.empty()) return new_rank;
  Box whole{std::vector<int>(dims.size(), 0), dims};
  bisect(whole, dims, order, 0, new_rank);
  return new_rank;
}

}  // namespace weft::mpi
