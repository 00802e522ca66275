#include "launch_protocol.h"

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "weft/error.h"

namespace weft::tools {

namespace {

constexpr std::string_view kPrefix = "WEFT_INTERNAL_";
constexpr std::string_view kConfigFile = "WEFT_INTERNAL_CONFIG";
constexpr std::string_view kAckFd = "WEFT_INTERNAL_ACK_FD";
// Followed by 0, 1, ... in the order of the command line.
constexpr std::string_view kSetting = "WEFT_INTERNAL_SET_";

std::string setting_variable(std::size_t index) {
  return std::string(kSetting) + std::to_string(index);
}

// Removes the variable after reading it.
std::optional<std::string> take_variable(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  std::string text = value;
  ::unsetenv(name.c_str());
  return text;
}

}  // namespace

std::vector<std::string> launch_environment(const LaunchSettings& launch) {
  std::vector<std::string> entries;
  if (launch.config_file) entries.push_back(std::string(kConfigFile) + "=" + *launch.config_file);
  for (std::size_t i = 0; i < launch.settings.size(); ++i) {
    const auto& [key, value] = launch.settings[i];
    entries.push_back(setting_variable(i) + "=" + key + "=" + value);
  }
  if (launch.ack_fd >= 0)
    entries.push_back(std::string(kAckFd) + "=" + std::to_string(launch.ack_fd));
  return entries;
}

bool is_launch_variable(const std::string& entry) {
  return entry.starts_with(kPrefix);
}

LaunchSettings take_launch_settings() {
  LaunchSettings launch;
  launch.config_file = take_variable(std::string(kConfigFile));
  for (std::size_t i = 0;; ++i) {
    std::optional<std::string> setting = take_variable(setting_variable(i));
    if (!setting) break;
    launch.settings.push_back(Config::parse_setting(*setting));
  }
  if (std::optional<std::string> fd = take_variable(std::string(kAckFd))) {
    int value = -1;
    auto [end, error] = std::from_chars(fd->data(), fd->data() + fd->size(), value);
    if (error != std::errc() || end != fd->data() + fd->size() || value < 0) {
      throw Error(std::string(kAckFd) + " is '" + *fd + "'; expected a file descriptor number");
    }
    launch.ack_fd = value;
  }
  return launch;
}

Config load_launch_config(const LaunchSettings& launch,
                          const std::vector<std::string>& environment) {
  ConfigOverrides overrides;
  overrides.file = launch.config_file;
  Config config = Config::load(overrides, environment);
  for (const auto& [key, value] : launch.settings) {
    config.set(key, value, ConfigSource::command_line, "weftrun");
  }
  return config;
}

std::vector<std::string> process_environment() {
  std::vector<std::string> entries;
  for (char** variable = environ; *variable != nullptr; ++variable) entries.emplace_back(*variable);
  return entries;
}

}  // namespace weft::tools
