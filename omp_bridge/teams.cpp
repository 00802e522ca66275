// The teams construct on the host (GOMP_teams_reg): a league of initial threads, each the
// initial thread of its own team, running the teams region; the caller runs team 0. Also the
// ICVs of teams regions without num_teams or thread_limit clauses (omp_set_num_teams,
// omp_set_teams_thread_limit).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "gomp_abi.h"
#include "omp.h"
#include "thread_state.h"
#include "weft/error.h"
#include "weft/thread.h"

namespace weft::omp {
namespace {

// A positive count from the environment variable `name`, or 0 when it is unset.
int count_from_environment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > (1 << 30)) {
    weft::fatal(std::string(name) + "=\"" + text + "\": expected a positive integer");
  }
  return static_cast<int>(value);
}

// nteams-var and teams-thread-limit-var (OMP_NUM_TEAMS, OMP_TEAMS_THREAD_LIMIT), 0 when unset as
// OpenMP 5.1 gives them. OpenMP keeps one of each per device, and the host is weft's only device.
// relaxed: each is read whole and orders nothing else.
std::atomic<int>& num_teams_var() {
  static std::atomic<int> var{count_from_environment("OMP_NUM_TEAMS")};
  return var;
}
std::atomic<int>& teams_thread_limit_var() {
  static std::atomic<int> var{count_from_environment("OMP_TEAMS_THREAD_LIMIT")};
  return var;
}

// Team `num` of a league of `size`, whose initial thread starts with the ICVs of the thread that
// encountered the teams construct (nthreads-var included), as libgomp and libomp give them.
void run_team(void (*fn)(void*), void* data, int num, int size, unsigned thread_limit,
              const Icvs& encountering) {
  ThreadState& state = self();
  state.icv() = encountering;
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
  // By default nteams-var, else one team per core of the rank.
  const int nteams = num_teams_var().load(std::memory_order_relaxed);
  int size = num_teams != 0 ? static_cast<int>(num_teams) : nteams;
  if (size == 0) size = std::max(1, static_cast<int>(caller.vps->size()));
  if (thread_limit == 0) {
    thread_limit = static_cast<unsigned>(teams_thread_limit_var().load(std::memory_order_relaxed));
  }
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
    teams.push_back(
        weft::spawn(attr, [=] { run_team(fn, data, num, size, thread_limit, saved_icv); }));
  }
  run_team(fn, data, 0, size, thread_limit, saved_icv);
  for (weft::Thread& team : teams) team.join();
  caller.league_num = saved_num;
  caller.league_size = saved_size;
  caller.icv() = saved_icv;
}

void omp_set_num_teams(int num_teams) throw() {
  if (num_teams < 1) {
    weft::fatal("omp_set_num_teams(" + std::to_string(num_teams) +
                "): expected a positive number of teams");
  }
  num_teams_var().store(num_teams, std::memory_order_relaxed);
}
int omp_get_max_teams() throw() {
  return num_teams_var().load(std::memory_order_relaxed);
}
void omp_set_teams_thread_limit(int thread_limit) throw() {
  if (thread_limit < 1) {
    weft::fatal("omp_set_teams_thread_limit(" + std::to_string(thread_limit) +
                "): expected a positive number of threads");
  }
  teams_thread_limit_var().store(thread_limit, std::memory_order_relaxed);
}
int omp_get_teams_thread_limit() throw() {
  return teams_thread_limit_var().load(std::memory_order_relaxed);
}

}  // extern "C"
