// Ending the whole job from inside it: every rank is a thread of this one process, so an error
// that MPI declares fatal ends the process.
#pragma once

#include <string_view>

namespace weft::mpi {

// Flushes the C streams (what ranks printed so far), writes "weft: <message>" on stderr in one
// write and ends the process at once with `status` (masked to 1..255; 0 becomes 1).
[[noreturn]] void end_job(std::string_view message, int status = 1) noexcept;
// The same for an end the program chose (a rank's exit status, MPI_Abort), told first to the
// launcher (report_deliberate_end_to), so that the job's status is this one rather than that of a
// peer which failed because this process went.
[[noreturn]] void end_job_deliberately(std::string_view message, int status) noexcept;
// The same, with status 1, for the loss of peer process `process` (killed, crashed, or gone before
// the job's end), told first to the launcher, which names that process's end as the job's cause.
[[noreturn]] void end_job_lost_process(int process, std::string_view message) noexcept;

}  // namespace weft::mpi
