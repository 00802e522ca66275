// The text forms of configuration values. A file, the environment and the command line all hand a
// value over as text (a TOML integer or boolean is printed first), so one parser per type decides
// for every source and a value is accepted or refused the same way wherever it comes from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weft::config_value {

// Without the blanks around it.
std::string_view trim(std::string_view text);

// A decimal integer with an optional sign.
std::optional<std::int64_t> parse_integer(std::string_view text);

// true/false, yes/no, on/off, 1/0, in any case.
std::optional<bool> parse_boolean(std::string_view text);

// Bytes, or a whole number with a binary suffix K, M, G or T (KiB, MiB, GiB, TiB alike, any case).
// "KB" and the like are refused: whether they mean 1000 or 1024 is a guess.
std::optional<std::uint64_t> parse_size(std::string_view text);

// The shortest text parse_size reads back as `bytes`: 65536 is "64K", 1000 stays "1000".
std::string format_size(std::uint64_t bytes);

}  // namespace weft::config_value
