// weftrun's command line (tools/weftrun_options.h), parsed without starting anything. The input is
// the arguments, separated by NUL bytes. An accepted command line must describe a job: at least
// one process, a program unless --help, and settings that name keys (their values are checked
// when the configuration is built, as weftrun does next).
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "weft/config.h"
#include "weft/error.h"
#include "weftrun_options.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using weft::fuzz::require;
  const std::vector<std::string_view> arguments =
      size == 0 ? std::vector<std::string_view>{}
                : weft::fuzz::split({reinterpret_cast<const char*>(data), size}, '\0');
  weft::tools::WeftrunOptions options;
  try {
    options = weft::tools::parse_weftrun_options(arguments);
  } catch (const weft::tools::UsageError&) {
    return 0;
  } catch (const weft::Error&) {
    return 0;
  }
  require(options.processes >= 1, "-p gave " + std::to_string(options.processes) + " processes");
  require(options.help || !options.command.empty(), "accepted without a program");
  require(options.command.size() <= arguments.size(), "more command words than arguments");
  for (const auto& [key, value] : options.launch.settings) {
    require(!key.empty(), "a setting without a key");
    require(key.find('=') == std::string::npos, "a setting's key holds '=': " + key);
  }
  // The settings reach the configuration at command-line precedence; a refusal is an error
  // message, never a crash. The file is not read: it names whatever the input says.
  weft::Config config;
  for (const auto& [key, value] : options.launch.settings) {
    try {
      config.set(key, value, weft::ConfigSource::command_line, "weftrun");
    } catch (const weft::Error&) {
    }
  }
  return 0;
}
