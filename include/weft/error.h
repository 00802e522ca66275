// Errors of weft: a refused input throws weft::Error with a message that names the call, the
// argument and what was expected; an unrecoverable state ends the process through fatal().
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace weft {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Prints "weft: <message>" on stderr and ends the process with exit status 1. Used where no
// caller could recover (a broken invariant, a thread that crashed) so that nothing fails silently.
[[noreturn]] void fatal(std::string_view message) noexcept;

}  // namespace weft
