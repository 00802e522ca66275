#include "mpi_t/tools_state.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "init/world.h"
#include "mpi.h"

namespace weft::mpi::tools {

namespace {

// By world rank (-1 for threads of no rank). A rank is a process to the program, so each has
// its own nesting; the calls are rare enough for one lock.
std::mutex depth_lock;
std::map<int, int>& depths() {
  static std::map<int, int> by_rank;
  return by_rank;
}

}  // namespace

int enter() {
  std::lock_guard lock(depth_lock);
  return ++depths()[caller_world_rank()];
}

int leave() {
  std::lock_guard lock(depth_lock);
  int& depth = depths()[caller_world_rank()];
  if (depth == 0) return -1;
  return --depth;
}

int check_initialized() {
  std::lock_guard lock(depth_lock);
  const auto it = depths().find(caller_world_rank());
  return it != depths().end() && it->second > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;
}

void copy_string(const std::string& text, char* out, int* length) {
  if (length == nullptr) return;
  if (out != nullptr && *length > 0) {
    const std::size_t n = std::min(text.size(), static_cast<std::size_t>(*length - 1));
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
  }
  *length = static_cast<int>(text.size()) + 1;
}

}  // namespace weft::mpi::tools
