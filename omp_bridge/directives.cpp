// The error directive (OpenMP 5.1) at run time.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "weft/error.h"

namespace {

// GCC passes (size_t)-1 for a message of unknown length.
std::string text(const char* message, std::size_t length) {
  if (length == static_cast<std::size_t>(-1)) length = std::strlen(message);
  return std::string(message, length);
}

}  // namespace

extern "C" {

void GOMP_warning(const char* message, std::size_t length) {
  if (message == nullptr) {
    std::fprintf(stderr, "weft: OpenMP warning directive\n");
  } else {
    std::fprintf(stderr, "weft: OpenMP warning: %s\n", text(message, length).c_str());
  }
}

void GOMP_error(const char* message, std::size_t length) {
  weft::fatal(message == nullptr ? std::string("OpenMP error directive")
                                 : "OpenMP error: " + text(message, length));
}

}  // extern "C"
