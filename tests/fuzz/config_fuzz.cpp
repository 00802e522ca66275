// Configuration as a user writes it: a TOML file, WEFT_* environment variables and --set
// key=value settings. The input is the file, then after a NUL byte one setting per line, then
// after another NUL one "NAME=value" variable per line. Whatever is accepted must leave every key
// with a canonical value that its key accepts again unchanged and that its typed getter reads.
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "weft/config.h"
#include "weft/error.h"

namespace {

using weft::Config;
using weft::ConfigSource;
using weft::fuzz::require;

// Exactly one typed getter reads a key, and the others refuse it by throwing.
void check_getters(const Config& config, const std::string& key) {
  int readers = 0;
  auto attempt = [&](auto read) {
    try {
      read();
      ++readers;
    } catch (const weft::Error&) {
    }
  };
  attempt([&] { config.get_int(key); });
  attempt([&] { config.get_bool(key); });
  attempt([&] { config.get_size(key); });
  attempt([&] { config.get_string(key); });
  require(readers == 1, key + " is read by " + std::to_string(readers) + " getters");
}

void check(const Config& config) {
  Config again;
  for (const Config::Entry& entry : config.entries()) {
    try {
      again.set(entry.key, entry.value, ConfigSource::command_line, "--set");
    } catch (const weft::Error& error) {
      weft::fuzz::fail("the canonical value of " + entry.key + " '" + entry.value +
                       "' is refused: " + error.what());
    }
    require(again.entry(entry.key).value == entry.value,
            entry.key + ": '" + entry.value + "' is canonical, but setting it gives '" +
                again.entry(entry.key).value + "'");
    check_getters(config, entry.key);
  }
  require(!config.describe().empty(), "describe() is empty");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string_view> sections =
      weft::fuzz::split({reinterpret_cast<const char*>(data), size}, '\0');
  Config config;
  try {
    config.load_toml(sections[0], "fuzz.toml");
  } catch (const weft::Error&) {
  }
  if (sections.size() > 2) {
    std::vector<std::string> environment;
    for (std::string_view line : weft::fuzz::split(sections[2], '\n'))
      environment.emplace_back(line);
    try {
      config.load_environment(environment);
    } catch (const weft::Error&) {
    }
  }
  if (sections.size() > 1) {
    for (std::string_view line : weft::fuzz::split(sections[1], '\n')) {
      try {
        const auto [key, value] = Config::parse_setting(line);
        config.set(key, value, ConfigSource::command_line, "--set");
      } catch (const weft::Error&) {
      }
    }
  }
  check(config);
  return 0;
}
