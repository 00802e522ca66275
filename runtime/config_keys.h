// The table of weft's configuration keys: name, type, default and doc of each, and the check that
// turns a value typed by a user into the canonical text Config stores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

struct ConfigKey {
  enum class Kind { integer, boolean, size, string, enumeration };

  std::string name;
  Kind kind;
  std::string default_value;  // as a user would write it
  std::string doc;
  std::int64_t min = 0;  // integer and size: the accepted range, both ends included
  std::int64_t max = 0;
  // enumeration: the accepted names. string: the accepted forms, none meaning any text; a form
  // "prefix:<what>" takes the prefix followed by a non-empty rest.
  std::vector<std::string> choices;

  std::string type() const;      // "integer 0..4096", "one of scatter|numa|compact"
  std::string expected() const;  // "an integer from 0 to 4096", for error messages
  // The canonical text of `text` as a value of this key, or nothing when the key refuses it.
  std::optional<std::string> canonical(std::string_view text) const;
};

std::string_view to_string(ConfigKey::Kind kind);  // "an integer", "a boolean", ...

// Every key, sorted by name.
const std::vector<ConfigKey>& config_keys();
const ConfigKey* find_config_key(std::string_view name);

}  // namespace weft
