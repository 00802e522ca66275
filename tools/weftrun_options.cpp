#include "weftrun_options.h"

#include <charconv>
#include <optional>

#include "weft/config.h"

namespace weft::tools {
namespace {

std::string positive_integer(std::string_view option, std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) {
    throw UsageError(std::string(option) + " '" + std::string(text) +
                     "' is not valid; expected an integer of at least 1");
  }
  return std::string(text);
}

}  // namespace

WeftrunOptions parse_weftrun_options(const std::vector<std::string_view>& arguments) {
  WeftrunOptions options;
  std::size_t i = 0;
  for (; i < arguments.size(); ++i) {
    const std::string_view argument = arguments[i];
    if (argument == "--") {
      ++i;
      break;
    }
    if (!argument.starts_with("-") || argument == "-") break;
    std::string_view name = argument;
    std::optional<std::string_view> inline_value;
    if (std::size_t equals = argument.find('='); equals != std::string_view::npos) {
      name = argument.substr(0, equals);
      inline_value = argument.substr(equals + 1);
    }
    auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= arguments.size()) {
        throw UsageError("option " + std::string(name) + " needs a value");
      }
      return arguments[++i];
    };
    auto& settings = options.launch.settings;
    if (name == "-h" || name == "--help") {
      options.help = true;
    } else if (name == "-n" || name == "-np") {
      settings.emplace_back("mpi.ranks", positive_integer(name, value()));
    } else if (name == "-p" || name == "--processes") {
      options.processes = std::stoi(positive_integer(name, value()));
    } else if (name == "-c") {
      settings.emplace_back("placement.cores_per_task", positive_integer(name, value()));
    } else if (name == "--placement") {
      settings.emplace_back("placement.tasks", std::string(value()));
    } else if (name == "--progress") {
      settings.emplace_back("placement.progress", std::string(value()));
    } else if (name == "--trace") {
      settings.emplace_back("trace.file", std::string(value()));
    } else if (name == "--stopped-limit") {
      const std::string_view text = value();
      int seconds = -1;
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
      if (error != std::errc() || end != text.data() + text.size() || seconds < 0) {
        throw UsageError("--stopped-limit '" + std::string(text) +
                         "' is not valid; expected a number of seconds, 0 for no limit");
      }
      options.stopped_limit = std::chrono::seconds(seconds);
    } else if (name == "--config") {
      options.launch.config_file = std::string(value());
    } else if (name == "--set") {
      settings.push_back(Config::parse_setting(value()));
    } else if ((name == "--oversubscribe" || name == "-oversubscribe" ||
                name == "--allow-run-as-root") &&
               !inline_value) {
      // Scripts written for Open MPI's mpirun pass these; neither changes a weft job.
    } else {
      throw UsageError("unknown option '" + std::string(argument) + "'");
    }
  }
  options.command.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i), arguments.end());
  if (options.command.empty() && !options.help) throw UsageError("no program given");
  return options;
}

}  // namespace weft::tools
