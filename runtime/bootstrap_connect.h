// The two ways a process of a multi-process job joins its exchange; connect_bootstrap picks one.
#pragma once

#include <memory>

#include "weft/bootstrap.h"

namespace weft::bootstrap {

// weftrun -p: the WEFT_INTERNAL_BOOTSTRAP_* variables are set. Reads and removes them, connects to
// weftrun's socket and introduces this process with the job's token.
std::unique_ptr<Bootstrap> connect_launcher(int ranks);

// A PMIx launcher (PMIX_RANK is set): every process holds `ranks` ranks.
std::unique_ptr<Bootstrap> connect_pmix(int ranks);

}  // namespace weft::bootstrap
