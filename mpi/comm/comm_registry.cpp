#include "comm/comm_registry.h"

#include <mutex>
#include <unordered_map>

#include "comm/communicator.h"
#include "init/world.h"
#include "weft/sync.h"

namespace weft::mpi {

namespace {

struct Entry {
  MPI_Comm comm = MPI_COMM_NULL;
  int joined = 0;
};

struct Registry {
  Mutex mutex;
  std::unordered_map<std::uint32_t, Entry> entries;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

MPI_Comm adopt(std::uint32_t key, int joining, const std::function<MPI_Comm()>& make) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Entry& entry = r.entries[key];
  if (entry.comm == MPI_COMM_NULL) entry.comm = make();
  const MPI_Comm comm = entry.comm;
  if (++entry.joined == joining) r.entries.erase(key);
  return comm;
}

int local_count(const std::vector<int>& world_ranks) {
  int count = 0;
  for (int w : world_ranks) count += world()->is_local(w) ? 1 : 0;
  return count;
}

}  // namespace weft::mpi
