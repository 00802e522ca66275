// OpenMP's internal control variables (ICVs): the process-wide values read once from the OMP_*
// environment variables, and the per-thread copy every OpenMP thread carries and passes to the
// teams it forks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::omp {

// Values of the schedule kinds as GCC encodes them (GOMP_loop_start's `sched`, omp_sched_t).
enum class ScheduleKind : int { static_ = 1, dynamic = 2, guided = 3, auto_ = 4 };

struct Schedule {
  ScheduleKind kind = ScheduleKind::dynamic;
  long chunk = 1;  // 0 or less: the kind's default
  // The monotonic modifier (omp_sched_monotonic), kept for omp_get_schedule; weft's schedules
  // are monotonic either way.
  bool monotonic = false;
};

// omp_proc_bind_t's values.
enum class ProcBind : int { false_ = 0, true_ = 1, primary = 2, close = 3, spread = 4 };

// What a place is, inside the cores a rank owns (OMP_PLACES): a core, a NUMA node, or a place of
// an explicit list.
enum class PlaceKind { core, numa_node, list };

// OMP_PLACES as given: an abstract name with an optional count (at most that many places), or an
// explicit list of places, each a set of the machine's processor numbers (places.h maps them onto
// the rank's cores).
struct PlaceSpec {
  PlaceKind kind = PlaceKind::core;
  int count = 0;  // the abstract name's (n); 0: every place
  std::vector<std::vector<int>> list;
  std::string text;  // the value, for OMP_DISPLAY_ENV and error messages
};

struct GlobalIcvs {
  std::vector<int> num_threads;  // OMP_NUM_THREADS, one entry per nesting level; empty: unset
  bool dynamic = false;
  int max_active_levels = 1;
  int thread_limit = 1 << 30;
  Schedule run_schedule;
  std::vector<ProcBind> proc_bind;  // OMP_PROC_BIND per level; empty: unset (false)
  PlaceSpec places;
  std::size_t stack_size = 0;  // OMP_STACKSIZE in bytes; 0: stack.omp_worker
  bool cancellation = false;
  bool display_affinity = false;  // OMP_DISPLAY_AFFINITY
  int max_task_priority = 0;
  bool passive_wait = false;  // OMP_WAIT_POLICY, shown only: weft always spins briefly, then parks
};

// Parsed from the environment at the first call (a bad value ends the process with a message
// naming the variable, its value and what is expected); OMP_DISPLAY_ENV prints them then.
const GlobalIcvs& global_icvs();
// Prints them on stderr as OMP_DISPLAY_ENV does.
void display_environment();

// The ICVs a thread carries (OpenMP keeps them per task; weft keeps them per implicit task, which
// is what a program observes unless it changes them inside explicit tasks).
struct Icvs {
  int num_threads = 1;  // nthreads-var for the next parallel region this thread encounters
  bool dynamic = false;
  int max_active_levels = 1;
  int thread_limit = 1 << 30;
  Schedule run_schedule;
  ProcBind proc_bind = ProcBind::false_;

  // The ICVs of a new root thread whose rank owns `cores` cores.
  static Icvs initial(int cores);
  // The ICVs a team's threads start with, forked at nesting `level` (1 for the outermost team).
  Icvs for_team(int level) const;
};

inline constexpr int kSupportedActiveLevels = 255;

}  // namespace weft::omp
