#include "places.h"

#include <algorithm>
#include <string>

#include "icv.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/topology.h"

namespace weft::omp {

namespace {

const std::vector<int>& processors_of(const Scheduler& scheduler, int vp) {
  return scheduler.topology().core(scheduler.vp_core(vp)).pus;
}

std::vector<Place> listed_places(const Scheduler& scheduler, const std::vector<int>& vps,
                                 const PlaceSpec& spec) {
  std::vector<Place> places;
  for (const std::vector<int>& listed : spec.list) {
    Place place;
    for (std::size_t at = 0; at < vps.size(); ++at) {
      bool holds = false;
      for (int processor : processors_of(scheduler, vps[at])) {
        if (std::binary_search(listed.begin(), listed.end(), processor)) {
          place.processors.push_back(processor);
          holds = true;
        }
      }
      if (holds) place.vps.push_back(static_cast<int>(at));
    }
    if (!place.vps.empty()) places.push_back(std::move(place));
  }
  if (places.empty()) {
    std::string mine;
    for (int vp : vps) {
      // Appended piece by piece, as in affinity_format.cpp: GCC 12 at -O3 reports a false
      // -Wrestrict on (",") + std::to_string(...).
      for (int processor : processors_of(scheduler, vp)) {
        if (!mine.empty()) mine += ',';
        mine += std::to_string(processor);
      }
    }
    fatal("OMP_PLACES=\"" + spec.text + "\": no place holds a processor of this rank's cores (" +
          mine + "); weftrun gives each rank its cores (-c), and OpenMP threads run only there");
  }
  return places;
}

}  // namespace

std::vector<Place> rank_places(const std::vector<int>& vps) {
  const Scheduler* scheduler = Scheduler::current();
  if (vps.empty() || scheduler == nullptr) return {Place{}};
  const PlaceSpec& spec = global_icvs().places;
  if (spec.kind == PlaceKind::list) return listed_places(*scheduler, vps, spec);
  std::vector<Place> places;
  std::vector<int> nodes;
  for (std::size_t at = 0; at < vps.size(); ++at) {
    std::size_t place = places.size();
    if (spec.kind == PlaceKind::numa_node) {
      const int node = scheduler->vp_numa(vps[at]);
      place = static_cast<std::size_t>(std::find(nodes.begin(), nodes.end(), node) - nodes.begin());
      if (place == nodes.size()) nodes.push_back(node);
    }
    if (place == places.size()) places.emplace_back();
    places[place].vps.push_back(static_cast<int>(at));
    const std::vector<int>& processors = processors_of(*scheduler, vps[at]);
    places[place].processors.insert(places[place].processors.end(), processors.begin(),
                                    processors.end());
  }
  if (spec.count > 0 && static_cast<std::size_t>(spec.count) < places.size()) {
    places.resize(static_cast<std::size_t>(spec.count));
  }
  return places;
}

int place_holding(const std::vector<Place>& places, int at) {
  for (std::size_t place = 0; place < places.size(); ++place) {
    const std::vector<int>& members = places[place].vps;
    if (std::find(members.begin(), members.end(), at) != members.end()) {
      return static_cast<int>(place);
    }
  }
  return -1;
}

}  // namespace weft::omp
