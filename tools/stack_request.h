// weft-info stacks: asks the processes of a running job for every user thread's stack.
#pragma once

#include <ostream>

namespace weft::tools {

// Prints the stacks of process `pid` when it runs a weft job, else of the weft job processes
// descending from it (weftrun's). Throws weft::Error when there is none or one does not answer.
void print_stacks(std::ostream& out, int pid);

}  // namespace weft::tools
