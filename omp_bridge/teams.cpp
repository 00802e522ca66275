// The teams construct on the host (GOMP_teams_reg): a league of initial threads, each the
// initial thread of its own team, running the teams region; the caller runs team 0.
#include <algorithm>
#include <string>
#include <vector>

#include "gomp_abi.h"
#include "thread_state.h"
#include "weft/error.h"
#include "weft/thread.h"

namespace weft::omp {
namespace {

void run_team(void (*fn)(void*), void* data, int num, int size, unsigned thread_limit) {
  ThreadState& state = self();
  state.league_num = num;
  state.league_size = size;
  if (thread_limit != 0) state.icv().thread_limit = static_cast<int>(thread_limit);
  state.icv().num_threads = std::min(state.icv().num_threads, state.icv().thread_limit);
  fn(data);
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

void GOMP_teams_reg(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit,
                    unsigned /*flags*/) {
  ThreadState& caller = self();
  // By default one team per core of the rank.
  const int size = num_teams != 0 ? static_cast<int>(num_teams)
                                  : std::max(1, static_cast<int>(caller.vps->size()));
  if (size > 1 && caller.vps->empty()) {
    weft::fatal("a teams construct of " + std::to_string(size) +
                " teams needs a running weft scheduler (build the program with weftcc -fopenmp)");
  }
  const int saved_num = caller.league_num;
  const int saved_size = caller.league_size;
  const Icvs saved_icv = caller.icv();
  std::vector<weft::Thread> teams;
  teams.reserve(static_cast<std::size_t>(size - 1));
  for (int num = 1; num < size; ++num) {
    weft::ThreadAttr attr;
    attr.type = weft::ThreadType::omp_worker;
    attr.rank = caller.rank;  // MPI calls from a team's thread act for the rank
    const std::vector<int>& vps = *caller.vps;
    attr.placement = weft::Placement::free(vps[static_cast<std::size_t>(num) % vps.size()]);
    teams.push_back(weft::spawn(attr, [=] { run_team(fn, data, num, size, thread_limit); }));
  }
  run_team(fn, data, 0, size, thread_limit);
  for (weft::Thread& team : teams) team.join();
  caller.league_num = saved_num;
  caller.league_size = saved_size;
  caller.icv() = saved_icv;
}

}  // extern "C"
