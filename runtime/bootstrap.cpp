#include "weft/bootstrap.h"

#include <cstdlib>
#include <string>

#include "bootstrap_connect.h"
#include "bootstrap_protocol.h"
#include "weft/error.h"

namespace weft {

std::unique_ptr<Bootstrap> connect_bootstrap(int ranks) {
  if (ranks < 1) {
    throw Error("connect_bootstrap: ranks = " + std::to_string(ranks) + "; expected at least 1");
  }
  // weftrun's variables first: a weftrun -p started under a PMIx launcher passes PMIX_RANK on to
  // its processes, which still belong to weftrun's job.
  if (std::getenv(std::string(bootstrap::kSocketVariable).c_str()) != nullptr) {
    return bootstrap::connect_launcher(ranks);
  }
  if (std::getenv("PMIX_RANK") != nullptr) return bootstrap::connect_pmix(ranks);
  return nullptr;
}

}  // namespace weft
