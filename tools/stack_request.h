// weft-info stacks and weft-info placement --pid: ask the processes of a running job for every
// user thread's stack, or for where each thread is placed and runs.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace weft::tools {

// Prints the stacks of process `pid` when it runs a weft job, else of the weft job processes
// descending from it (weftrun's). Throws weft::Error when there is none or one does not answer.
void print_stacks(std::ostream& out, int pid);

// The placement answers of the same processes (mpi/diagnostics/monitor.cpp writes them), one per
// process in pid order. Throws as print_stacks does.
std::vector<std::string> ask_placement(int pid);

}  // namespace weft::tools
