// What weftrun hands to the program it starts, through environment variables that the
// configuration loader skips (WEFT_INTERNAL_*): the --config file, the settings of its command line
// and a pipe on which the program acknowledges that it is a weft program. Both sides build the
// program's configuration with load_launch_config, so that weftrun refuses exactly what the
// program would.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weft/config.h"

namespace weft::tools {

struct LaunchSettings {
  std::optional<std::string> config_file;
  // key=value pairs applied at command-line precedence, later ones winning.
  std::vector<std::pair<std::string, std::string>> settings;
  int ack_fd = -1;  // write end of weftrun's acknowledgement pipe; -1 without weftrun
};

// The byte a weft program writes on ack_fd once its configuration is loaded.
inline constexpr char kAcknowledgement = 'W';

// "NAME=value" entries carrying `launch`, to add to the child's environment.
std::vector<std::string> launch_environment(const LaunchSettings& launch);
// True for the variables launch_environment produces (a launcher drops inherited ones).
bool is_launch_variable(const std::string& entry);

// Reads the WEFT_INTERNAL_* variables of this process and removes them from its environment, so
// that programs the job starts in turn do not inherit them.
LaunchSettings take_launch_settings();

// Defaults < file (launch.config_file, else $WEFT_CONFIG) < the WEFT_* variables of `environment`
// < launch.settings (origin "weftrun"). Throws weft::Error for a refused key or value.
Config load_launch_config(const LaunchSettings& launch,
                          const std::vector<std::string>& environment);

// The process environment as "NAME=value" strings.
std::vector<std::string> process_environment();

}  // namespace weft::tools
