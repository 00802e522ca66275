#include "weft/config.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

#include "config_keys.h"
#include "config_value.h"
#include "weft/error.h"

namespace weft {
namespace {

using Kind = ConfigKey::Kind;

// Where a value came from, as error messages say it: "environment variable WEFT_SCHEDULER_VPS".
std::string provenance(ConfigSource source, std::string_view origin) {
  if (origin.empty()) return std::string(to_string(source));
  switch (source) {
    case ConfigSource::file:
      return "file " + std::string(origin);
    case ConfigSource::environment:
      return "environment variable " + std::string(origin);
    case ConfigSource::defaults:
    case ConfigSource::command_line:
      break;
  }
  return std::string(origin);
}

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Levenshtein distance, ignoring case so that "Scheduler.VPS" still finds its key.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitution = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

// "; did you mean 'x'?" for a near miss, else the whole list, so that the reader never has to
// look the names up elsewhere.
std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string* nearest = nullptr;
  std::size_t best = std::max<std::size_t>(2, name.size() / 4) + 1;
  for (const std::string& candidate : candidates) {
    std::size_t distance = edit_distance(name, candidate);
    if (distance < best) {
      best = distance;
      nearest = &candidate;
    }
  }
  if (nearest != nullptr) return "; did you mean '" + *nearest + "'?";
  std::string list = "; known: ";
  for (const std::string& candidate : candidates) {
    if (&candidate != &candidates.front()) list.append(", ");
    list.append(candidate);
  }
  return list;
}

std::vector<std::string> key_names() {
  std::vector<std::string> names;
  for (const ConfigKey& key : config_keys()) names.push_back(key.name);
  return names;
}

// scheduler.vps is WEFT_SCHEDULER_VPS.
std::string environment_variable(std::string_view key) {
  std::string name = "WEFT_";
  for (char c : key) {
    name.push_back(c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  return name;
}

// Keys may hold underscores, so a variable's key cannot be spelled back from its name; the
// variables are spelled forward from the keys instead.
const ConfigKey* key_of_variable(std::string_view variable) {
  for (const ConfigKey& key : config_keys()) {
    if (environment_variable(key.name) == variable) return &key;
  }
  return nullptr;
}

// Variables of weft's tools share the WEFT_ prefix without being configuration keys.
bool is_tool_variable(std::string_view name) {
  for (std::string_view tool : {"WEFT_CONFIG", "WEFT_CC", "WEFT_CXX", "WEFT_BUILD_DIR"}) {
    if (name == tool) return true;
  }
  return name.starts_with("WEFT_INTERNAL_");
}

// The environment is the site's and the user's as much as weft's: a module's WEFT_ROOT or a
// user's WEFT_HOME must not stop a job. Said once per process (the environment does not change
// between the loads of one process), naming each variable, with the near miss of a misspelled
// key, and the known variables.
void warn_unknown_variables(const std::vector<std::string>& unknown) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true, std::memory_order_relaxed)) return;  // orders nothing else
  std::vector<std::string> variables;
  for (const std::string& known : key_names()) variables.push_back(environment_variable(known));
  std::string text = "weft: warning: ignoring environment variable";
  text += unknown.size() > 1 ? "s " : " ";
  for (const std::string& name : unknown) {
    if (&name != &unknown.front()) text += ", ";
    text += name;
    const std::string hint = suggestion(name, variables);
    if (hint.starts_with("; did you mean")) text += " (" + hint.substr(2) + ")";
  }
  text += unknown.size() > 1 ? ": not configuration variables" : ": not a configuration variable";
  text += "; known: ";
  for (const std::string& known : variables) {
    if (&known != &variables.front()) text += ", ";
    text += known;
  }
  text += "; weft's tools also read WEFT_CONFIG, WEFT_CC, WEFT_CXX and WEFT_BUILD_DIR\n";
  std::fputs(text.c_str(), stderr);
}

std::optional<std::string> variable_value(const std::vector<std::string>& environment,
                                          std::string_view name) {
  std::optional<std::string> value;
  for (const std::string& assignment : environment) {
    if (assignment.size() > name.size() && assignment.starts_with(name) &&
        assignment[name.size()] == '=') {
      value = assignment.substr(name.size() + 1);
    }
  }
  return value;
}

std::string read_file(const std::string& path, std::string_view named_by) {
  auto fail = [&](int error) -> Error {
    std::string message = "cannot read configuration file '" + path + "'";
    if (!named_by.empty()) message += " (named by " + std::string(named_by) + ")";
    return Error(message + ": " + std::strerror(error));
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw fail(errno);
  std::string text;
  char buffer[4096];
  std::size_t read;
  while ((read = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) text.append(buffer, read);
  if (std::ferror(file.get())) throw fail(errno);
  return text;
}

// A TOML value as a user would have typed it on a command line: the string itself, an integer in
// decimal whatever base the file used, anything else as TOML prints it so that its refusal shows
// what was written.
std::string value_text(const toml::node& node) {
  if (const auto* string = node.as_string()) return string->get();
  if (const auto* integer = node.as_integer()) return std::to_string(integer->get());
  if (const auto* boolean = node.as_boolean()) return boolean->get() ? "true" : "false";
  std::ostringstream text;
  node.visit([&](const auto& value) { text << value; });
  return text.str();
}

std::string file_position(std::string_view file, const toml::source_region& region) {
  std::string position(file);
  if (region.begin.line > 0) {
    // Two appends: GCC 12 at -O3 misreads `+= ":" + to_string(...)` as an overlapping copy.
    position += ':';
    position += std::to_string(region.begin.line);
  }
  return position;
}

std::string_view getter_of(Kind kind) {
  switch (kind) {
    case Kind::integer:
      return "get_int";
    case Kind::boolean:
      return "get_bool";
    case Kind::size:
      return "get_size";
    case Kind::string:
    case Kind::enumeration:
      return "get_string";
  }
  return "entry";
}

// The key `getter` may read: an unknown key or one of another type is the caller's mistake.
const ConfigKey& typed_key(std::string_view name, std::string_view getter) {
  const ConfigKey* key = find_config_key(name);
  if (key == nullptr) {
    throw Error("Config::" + std::string(getter) + ": unknown configuration key '" +
                std::string(name) + "'" + suggestion(name, key_names()));
  }
  if (getter_of(key->kind) != getter) {
    throw Error("Config::" + std::string(getter) + ": configuration key '" + key->name + "' is " +
                std::string(to_string(key->kind)) + "; read it with " +
                std::string(getter_of(key->kind)));
  }
  return *key;
}

// Entries are kept in the order of the key table, so a key's place in one is its place in both.
std::size_t index_of(const ConfigKey& key) {
  return static_cast<std::size_t>(&key - config_keys().data());
}

}  // namespace

std::string_view to_string(ConfigSource source) {
  switch (source) {
    case ConfigSource::defaults:
      return "default";
    case ConfigSource::file:
      return "file";
    case ConfigSource::environment:
      return "environment";
    case ConfigSource::command_line:
      return "command line";
  }
  return "unknown source";
}

Config::Config() {
  for (const ConfigKey& key : config_keys()) {
    std::optional<std::string> value = key.canonical(key.default_value);
    if (!value) fatal("configuration key '" + key.name + "' refuses its own default");
    entries_.push_back({key.name, *value, key.type(), key.doc, ConfigSource::defaults, {}});
  }
}

Config Config::load(const ConfigOverrides& overrides) {
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    environment.emplace_back(*variable);
  }
  return load(overrides, environment);
}

Config Config::load(const ConfigOverrides& overrides, const std::vector<std::string>& environment) {
  Config config;
  if (overrides.file) {
    config.load_toml(read_file(*overrides.file, "--config"), *overrides.file);
  } else if (std::optional<std::string> path = variable_value(environment, "WEFT_CONFIG");
             path && !path->empty()) {
    config.load_toml(read_file(*path, "environment variable WEFT_CONFIG"), *path);
  }
  config.load_environment(environment);
  for (const auto& [key, value] : overrides.settings) {
    config.set(key, value, ConfigSource::command_line, "--set");
  }
  return config;
}

std::pair<std::string, std::string> Config::parse_setting(std::string_view text) {
  std::size_t equals = text.find('=');
  std::string_view key = config_value::trim(text.substr(0, equals));
  if (equals == std::string_view::npos || key.empty()) {
    throw Error("--set expects key=value, got '" + std::string(text) + "'");
  }
  return {std::string(key), std::string(text.substr(equals + 1))};
}

void Config::set(std::string_view key, std::string_view value, ConfigSource source,
                 std::string_view origin) {
  const ConfigKey* spec = find_config_key(key);
  if (spec == nullptr) {
    throw Error("unknown configuration key '" + std::string(key) + "' (" +
                provenance(source, origin) + ")" + suggestion(key, key_names()));
  }
  std::optional<std::string> canonical = spec->canonical(value);
  if (!canonical) {
    throw Error("configuration key '" + spec->name + "' = '" + std::string(value) + "' (" +
                provenance(source, origin) + "): expected " + spec->expected());
  }
  Entry& entry = entries_[index_of(*spec)];
  if (source < entry.source) return;
  entry.value = std::move(*canonical);
  entry.source = source;
  entry.origin = std::string(origin);
}

void Config::load_file(const std::string& path) {
  load_toml(read_file(path, {}), path);
}

void Config::load_toml(std::string_view text, std::string_view origin) {
  toml::table document;
  try {
    document = toml::parse(text, origin);
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    throw Error("invalid TOML in configuration file " + std::string(origin) + " at line " +
                std::to_string(at.line) + ", column " + std::to_string(at.column) + ": " +
                std::string(error.description()));
  }
  // Tables nest as the dotted names do; a table where a key expects a value is that key's
  // refused value rather than unknown keys below it.
  auto apply = [&](auto& self, const toml::table& table, const std::string& prefix) -> void {
    for (const auto& [name, node] : table) {
      std::string key = prefix + std::string(name.str());
      const toml::table* nested = node.as_table();
      if (nested != nullptr && find_config_key(key) == nullptr) {
        self(self, *nested, key + ".");
        continue;
      }
      set(key, value_text(node), ConfigSource::file, file_position(origin, node.source()));
    }
  };
  apply(apply, document, "");
}

void Config::load_environment(const std::vector<std::string>& environment) {
  std::vector<std::string> unknown;
  for (const std::string& assignment : environment) {
    std::size_t equals = assignment.find('=');
    if (equals == std::string::npos) continue;
    std::string_view name = std::string_view(assignment).substr(0, equals);
    if (!name.starts_with("WEFT_") || is_tool_variable(name)) continue;
    const ConfigKey* key = key_of_variable(name);
    if (key == nullptr) {
      unknown.emplace_back(name);
      continue;
    }
    set(key->name, std::string_view(assignment).substr(equals + 1), ConfigSource::environment,
        name);
  }
  if (!unknown.empty()) warn_unknown_variables(unknown);
}

std::int64_t Config::get_int(std::string_view key) const {
  const ConfigKey& spec = typed_key(key, "get_int");
  return *config_value::parse_integer(entries_[index_of(spec)].value);
}

bool Config::get_bool(std::string_view key) const {
  const ConfigKey& spec = typed_key(key, "get_bool");
  return *config_value::parse_boolean(entries_[index_of(spec)].value);
}

std::uint64_t Config::get_size(std::string_view key) const {
  const ConfigKey& spec = typed_key(key, "get_size");
  return *config_value::parse_size(entries_[index_of(spec)].value);
}

std::string Config::get_string(std::string_view key) const {
  const ConfigKey& spec = typed_key(key, "get_string");
  return entries_[index_of(spec)].value;
}

int Config::priority(ThreadType type) const {
  return static_cast<int>(get_int("priority." + std::string(to_string(type))));
}

std::size_t Config::stack_size(ThreadType type) const {
  return static_cast<std::size_t>(get_size("stack." + std::string(to_string(type))));
}

const Config::Entry& Config::entry(std::string_view key) const {
  const ConfigKey* spec = find_config_key(key);
  if (spec == nullptr) {
    throw Error("Config::entry: unknown configuration key '" + std::string(key) + "'" +
                suggestion(key, key_names()));
  }
  return entries_[index_of(*spec)];
}

std::vector<Config::Entry> Config::entries() const {
  return entries_;
}

std::string Config::describe() const {
  std::string text;
  for (const Entry& entry : entries_) {
    text += entry.key + " = " + (entry.value.empty() ? "\"\"" : entry.value) + "  (" +
            std::string(to_string(entry.source));
    if (!entry.origin.empty()) text += ": " + entry.origin;
    text += ")\n";
  }
  return text;
}

std::string Config::documentation() {
  std::string text;
  for (const ConfigKey& key : config_keys()) {
    text += key.name + "  (" + key.type() + ", default " +
            (key.default_value.empty() ? "\"\"" : key.default_value) + ", environment " +
            environment_variable(key.name) + ")\n    " + key.doc + "\n";
  }
  return text;
}

}  // namespace weft
