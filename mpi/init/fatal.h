// Ending the whole job from inside it: every rank is a thread of this one process, so an error
// that MPI declares fatal ends the process.
#pragma once

#include <string_view>

namespace weft::mpi {

// Flushes the C streams (what ranks printed so far), writes "weft: <message>" on stderr in one
// write and ends the process at once with `status` (masked to 1..255; 0 becomes 1).
[[noreturn]] void end_job(std::string_view message, int status = 1) noexcept;

}  // namespace weft::mpi
