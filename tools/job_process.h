// The program weftrun starts: a child process in its own process group, watched until it ends.
// SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to weftrun go to the whole group, and SIGKILL follows
// after a grace period; SIGTSTP stops the group with weftrun. When the child ends, whatever it
// left in its group is killed, and the child is killed too if weftrun dies first.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "launch_protocol.h"

namespace weft::tools {

struct JobOutcome {
  bool signaled = false;  // ended by a signal (`code` is the signal), else exited with `code`
  int code = 0;
  bool acknowledged = false;  // the program said it is a weft program (see LaunchSettings)
};

inline constexpr std::chrono::seconds kKillGrace{2};

// Runs `path` with `arguments` (argv, argv[0] included) and the environment of this process, in
// which launch's variables replace any inherited WEFT_INTERNAL_* ones. launch.ack_fd is set here.
// Throws weft::Error when the process cannot be started.
JobOutcome run_job_process(const std::string& path, const std::vector<std::string>& arguments,
                           LaunchSettings launch);

}  // namespace weft::tools
