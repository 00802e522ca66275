// weft-info placement --pid: where every user thread of a running job is placed and runs, as
// text and, with --svg, drawn on the machine as weft-info placement --tasks N --svg draws it.
#pragma once

#include <optional>
#include <ostream>
#include <string>

namespace weft::tools {

// Asks the job's processes (tools/stack_request.h) and prints a block per process; writes the
// picture of every process's threads into `svg` when given. Throws weft::Error when the job does
// not answer or the picture cannot be written.
void print_running_placement(std::ostream& out, int pid, const std::optional<std::string>& svg);

}  // namespace weft::tools
