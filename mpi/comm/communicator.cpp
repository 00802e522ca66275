#include "comm/communicator.h"

#include <algorithm>
#include <map>
#include <new>

#include "errhan/error.h"
#include "init/world.h"
#include "util/profiling.h"
#include "weft/trace_message.h"

weft_mpi_comm weft_mpi_comm_world;
weft_mpi_comm weft_mpi_comm_self;

weft_mpi_comm::weft_mpi_comm(std::vector<int> world_ranks, std::uint32_t context, int world_size)
    : context(context),
      members(std::move(world_ranks)),
      rank_of_world(
          static_cast<std::size_t>(std::max(
              world_size,
              members.empty() ? 0 : *std::max_element(members.begin(), members.end()) + 1)),
          -1),
      locals(members.size()),
      references(static_cast<int>(members.size())) {
  for (std::size_t r = 0; r < members.size(); ++r) rank_of_world[members[r]] = static_cast<int>(r);
  const weft::mpi::World* w = weft::mpi::world();
  // A spawned world's members are numbered past the first world (init/world.h).
  for (int member : members)
    spans_processes = spans_processes || (w != nullptr && !w->is_local(member));
  if (!spans_processes) return;
  // Only the members of this process free this object.
  int local_members = 0;
  for (int member : members) local_members += w->is_local(member) ? 1 : 0;
  references.store(local_members, std::memory_order_relaxed);
  std::map<int, int> group_of_process;
  const int size = static_cast<int>(members.size());
  groups.group_of.resize(members.size());
  groups.slot_of.resize(members.size());
  for (int r = 0; r < size; ++r) {
    const int process = w->process_of(members[r]);
    auto [entry, added] = group_of_process.emplace(process, static_cast<int>(groups.ranks.size()));
    if (added) groups.ranks.emplace_back();
    std::vector<int>& ranks = groups.ranks[static_cast<std::size_t>(entry->second)];
    groups.consecutive = groups.consecutive && (ranks.empty() || ranks.back() == r - 1);
    groups.group_of[r] = entry->second;
    groups.slot_of[r] = static_cast<int>(ranks.size());
    ranks.push_back(r);
    if (process == w->process()) groups.local = entry->second;
  }
}

int weft_mpi_comm::rank_of(int world_rank) const {
  if (world_rank < 0 || world_rank >= static_cast<int>(rank_of_world.size())) return -1;
  const int rank = rank_of_world[world_rank];
  return self && rank >= 0 ? 0 : rank;
}

int weft_mpi_comm::peer_count() const {
  return inter != nullptr ? static_cast<int>(inter->remote.size()) : size();
}

int weft_mpi_comm::world_rank(int peer) const {
  if (inter != nullptr) return inter->remote[peer];
  return self ? weft::mpi::caller_world_rank() : members[peer];
}

int weft_mpi_comm::my_rank() const {
  return rank_of(weft::mpi::caller_world_rank());
}

weft_mpi_comm::Local& weft_mpi_comm::local_of_caller() {
  return local_of(weft::mpi::caller_world_rank());
}

namespace weft::mpi {

namespace {
// World and self take the first two pairs.
std::atomic<std::uint32_t> next_context{0};
}  // namespace

std::uint32_t allocate_context() {
  // relaxed: only uniqueness matters; the communicator carrying it is published by other means.
  const std::uint32_t k = next_context.fetch_add(1, std::memory_order_relaxed);
  // Interleaved among the job's processes, so that a number is unique in the whole job.
  const World* w = world();
  const std::uint32_t processes =
      w != nullptr ? static_cast<std::uint32_t>(w->layout().processes()) : 1;
  const std::uint32_t process = w != nullptr ? static_cast<std::uint32_t>(w->process()) : 0;
  return 4 + 2 * (k * processes + process);
}

void reset_predefined_comms(int world_size) {
  std::vector<int> everyone(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) everyone[r] = r;

  weft_mpi_comm_world.~weft_mpi_comm();
  new (&weft_mpi_comm_world) weft_mpi_comm(everyone, 0, world_size);
  weft_mpi_comm_world.world = true;
  for (auto& local : weft_mpi_comm_world.locals) local.name = "MPI_COMM_WORLD";

  // Self: one slot per world rank, each rank alone in it.
  weft_mpi_comm_self.~weft_mpi_comm();
  new (&weft_mpi_comm_self) weft_mpi_comm(everyone, 2, world_size);
  weft_mpi_comm_self.self = true;
  weft_mpi_comm_self.spans_processes = false;
  for (auto& local : weft_mpi_comm_self.locals) local.name = "MPI_COMM_SELF";
  define_in_trace(weft_mpi_comm_world);
  define_in_trace(weft_mpi_comm_self);
}

void define_in_trace(const Comm& comm) noexcept {
  if (!trace::enabled(trace::Category::message)) [[likely]]
    return;
  trace::define_communicator(
      comm.context, comm.members,
      comm.inter != nullptr ? std::span<const int>(comm.inter->remote) : std::span<const int>(),
      comm.self);
  // Its collectives' traffic goes through the local group's hidden communicator.
  if (comm.inter != nullptr && comm.inter->local != nullptr) define_in_trace(*comm.inter->local);
}

}  // namespace weft::mpi

extern "C" int PMPI_Comm_size(MPI_Comm comm, int* size) {
  if (int rc = weft::mpi::check_initialized("MPI_Comm_size"); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, "MPI_Comm_size"); rc != MPI_SUCCESS) return rc;
  if (size == nullptr) {
    return weft::mpi::raise(comm, "MPI_Comm_size", MPI_ERR_ARG,
                            "size = NULL, expected where to store the size");
  }
  *size = comm->size();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_size);

extern "C" int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  if (int rc = weft::mpi::check_initialized("MPI_Comm_rank"); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, "MPI_Comm_rank"); rc != MPI_SUCCESS) return rc;
  if (rank == nullptr) {
    return weft::mpi::raise(comm, "MPI_Comm_rank", MPI_ERR_ARG,
                            "rank = NULL, expected where to store the rank");
  }
  *rank = comm->my_rank();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_rank);
