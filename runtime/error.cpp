#include "weft/error.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace weft {

void fatal(std::string_view message) noexcept {
  // One write(2) so that the line is not interleaved with another thread's output.
  std::string line = "weft: ";
  line.append(message);
  line.push_back('\n');
  // The system call itself: libweft's write() may park a user thread waiting for the descriptor.
  ssize_t ignored = ::syscall(SYS_write, STDERR_FILENO, line.data(), line.size());
  (void)ignored;
  std::_Exit(EXIT_FAILURE);
}

}  // namespace weft
