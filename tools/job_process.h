// The programs weftrun starts: one child process per process of the job, each in its own process
// group, watched until all have ended. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to weftrun go to
// every group, and SIGKILL follows after a grace period; SIGTSTP stops the groups with weftrun.
// When a process fails (a non-zero exit status or a signal) while others still run, they are given
// kPeerNoticeGrace to end by themselves, then sent SIGTERM, then SIGKILL. When a child ends,
// whatever it left in its group is killed, and every child is killed too if weftrun dies first.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launch_protocol.h"

namespace weft::tools {

struct JobOutcome {
  bool signaled = false;  // ended by a signal (`code` is the signal), else exited with `code`
  int code = 0;
  bool acknowledged = false;  // the program said it is a weft program (see LaunchSettings)
  // Non-zero when weftrun ended the job because this process stayed stopped by that signal.
  int stopped_by = 0;
};

// One process to start: its launch settings and "NAME=value" entries added to its environment.
struct ProcessLaunch {
  LaunchSettings launch;
  std::vector<std::string> environment;
};

struct JobOutcomes {
  std::vector<JobOutcome> processes;  // in the order of the launches
  // The process whose failure stopped the others; nothing when none failed before the others
  // ended (or the job had a single process).
  std::optional<int> failed;
};

inline constexpr std::chrono::seconds kKillGrace{2};
// After one process of a job failed: how long the others have to end by themselves (a weft
// process ends at once naming a peer it lost), then between the SIGTERM and the SIGKILL that stop
// those still running.
inline constexpr std::chrono::milliseconds kPeerNoticeGrace{1000};
inline constexpr std::chrono::milliseconds kFailureGrace{500};
// How long a process of several may stay stopped (SIGSTOP) before weftrun fails the job: its
// peers wait for it and cannot tell it from a process that no longer answers.
inline constexpr std::chrono::seconds kStoppedLimit{30};

// Runs `path` with `arguments` (argv, argv[0] included) once per entry of `launches`, with the
// environment of this process, in which each launch's variables replace any inherited
// WEFT_INTERNAL_* ones. Each launch.ack_fd is set here. Throws weft::Error when a process cannot
// be started (the ones already started are killed). A process of several that stays stopped for
// `stopped_limit` (zero: no limit) fails the job, as a process killed by a signal.
JobOutcomes run_job_processes(const std::string& path, const std::vector<std::string>& arguments,
                              std::vector<ProcessLaunch> launches,
                              std::chrono::milliseconds stopped_limit = kStoppedLimit);

}  // namespace weft::tools
