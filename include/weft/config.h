// Typed configuration of weft. Every key has a type, a default and a one-line doc. Sources apply
// in increasing precedence: defaults < TOML file (--config, else $WEFT_CONFIG) < environment
// (WEFT_ + key upper-cased, dots as underscores: scheduler.vps is WEFT_SCHEDULER_VPS) < command
// line (--set key=value). A value is checked when it is set: an unknown key, a value of the wrong
// type or out of range throws weft::Error naming the key, the value, its source and what is
// expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/thread_type.h"

namespace weft {

enum class ConfigSource { defaults, file, environment, command_line };
std::string_view to_string(
    ConfigSource source);  // "default", "file", "environment", "command line"

// What a tool's command line contributes: an optional --config file and --set key=value pairs,
// in the order given (a later setting of the same key wins).
struct ConfigOverrides {
  std::optional<std::string> file;
  std::vector<std::pair<std::string, std::string>> settings;
};

class Config {
 public:
  struct Entry {
    std::string key;
    std::string value;  // canonical text of the effective value
    std::string type;   // what is expected, e.g. "integer 0..4096", "one of scatter|numa|compact"
    std::string doc;
    ConfigSource source;
    std::string origin;  // file path, environment variable name, "--set"; empty for defaults
  };

  // Every key at its default value.
  Config();

  // Defaults, then the file (overrides.file, else $WEFT_CONFIG), then the WEFT_* variables of
  // `environment` ("NAME=value" strings; the process environment when omitted), then
  // overrides.settings.
  static Config load(const ConfigOverrides& overrides = {});
  static Config load(const ConfigOverrides& overrides, const std::vector<std::string>& environment);

  // Splits "key=value" as typed on a command line; throws weft::Error when there is no '='.
  static std::pair<std::string, std::string> parse_setting(std::string_view text);

  // A value from a source of lower precedence than the key's current one is checked but not
  // applied, so that the outcome does not depend on the order of the calls.
  void set(std::string_view key, std::string_view value, ConfigSource source,
           std::string_view origin = {});
  void load_file(const std::string& path);
  void load_toml(std::string_view text, std::string_view origin);
  // Reads the WEFT_* entries of `environment`. Variables that belong to weft's tools rather than
  // to the configuration (WEFT_CONFIG, WEFT_CC, WEFT_CXX, WEFT_BUILD_DIR, and names starting with
  // WEFT_INTERNAL_) are skipped. Any other unknown WEFT_ variable is ignored, with one warning per
  // process on stderr that names it and lists the known variables: the environment also holds
  // the site's and the user's (WEFT_ROOT, WEFT_HOME). Unknown keys of a file or --set are refused.
  void load_environment(const std::vector<std::string>& environment);

  std::int64_t get_int(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::uint64_t get_size(std::string_view key) const;  // bytes
  std::string get_string(std::string_view key) const;  // strings and enumerations

  int priority(ThreadType type) const;            // priority.<type>
  std::size_t stack_size(ThreadType type) const;  // stack.<type>

  const Entry& entry(std::string_view key) const;
  std::vector<Entry> entries() const;  // sorted by key
  // One line per key: "key = value  (source[: origin])".
  std::string describe() const;
  // One block per key: name, type, default and doc; for --help texts.
  static std::string documentation();

 private:
  std::vector<Entry> entries_;
};

}  // namespace weft
