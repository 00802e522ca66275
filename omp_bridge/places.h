// The places of a rank (OMP_PLACES mapped onto the cores weftrun gives the rank): what the
// place-list API reports and what bound workers are pinned to.
#pragma once

#include <vector>

namespace weft::omp {

struct Place {
  std::vector<int> vps;         // indices into the rank's VPs (ThreadState::vps) of its cores
  std::vector<int> processors;  // the operating-system processor numbers it holds
};

// The rank whose VPs are `vps`: one place per core under cores/threads/ll_caches (the default),
// one per NUMA node of its cores under sockets/numa_domains, at most the name's (count) of them;
// under an explicit list, each listed place that holds a processor of the rank's cores, with
// those processors only, as libgomp and libomp drop the processors outside their affinity mask.
// A list none of whose places holds one ends the program, naming the list and the rank's
// processors. Without a running scheduler, one empty place.
std::vector<Place> rank_places(const std::vector<int>& vps);

// The first place of `places` holding VP index `at`, or -1.
int place_holding(const std::vector<Place>& places, int at);

}  // namespace weft::omp
