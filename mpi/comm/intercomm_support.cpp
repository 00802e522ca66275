#include <algorithm>
#include <memory>

#include "coll/collective_spanning.h"
#include "coll/spanning_exchange.h"
#include "comm/comm_registry.h"
#include "comm/intercomm.h"
#include "errhan/error.h"
#include "init/world.h"

namespace weft::mpi::inter {

int next_call_tag(MPI_Comm comm) {
  return spanning::tag_of(comm->local_of_caller().collectives++, 0);
}

int swap(MPI_Comm comm, int peer, int tag, const std::vector<int>& out, std::vector<int>& in) {
  spanning::Exchange exchange(comm, tag);
  int sizes[2] = {static_cast<int>(out.size()), 0};
  exchange.send(peer, &sizes[0], 1, MPI_INT);
  exchange.receive(peer, &sizes[1], 1, MPI_INT);
  if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
  in.assign(static_cast<std::size_t>(sizes[1]), 0);
  exchange.send(peer, out.data(), out.size(), MPI_INT);
  exchange.receive(peer, in.data(), in.size(), MPI_INT);
  return exchange.wait();
}

int bcast_ints(MPI_Comm comm, const std::vector<int>& ranks, int root, int tag,
               std::vector<int>& data) {
  const int n = static_cast<int>(ranks.size());
  const int me =
      static_cast<int>(std::find(ranks.begin(), ranks.end(), comm->my_rank()) - ranks.begin());
  const int relative = (me - root + n) % n;
  auto rank_at = [&](int r) { return ranks[static_cast<std::size_t>((r + root) % n)]; };
  spanning::Exchange exchange(comm, tag);
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if ((relative & mask) != 0) {
      // The size first, then the data: two messages on one tag arrive in order.
      int size = 0;
      exchange.receive(rank_at(relative - mask), &size, 1, MPI_INT);
      if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
      data.assign(static_cast<std::size_t>(size), 0);
      exchange.receive(rank_at(relative - mask), data.data(), data.size(), MPI_INT);
      if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
      break;
    }
  }
  const int size = static_cast<int>(data.size());
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (relative + mask < n) {
      exchange.send(rank_at(relative + mask), &size, 1, MPI_INT);
      exchange.send(rank_at(relative + mask), data.data(), data.size(), MPI_INT);
    }
  }
  return exchange.wait();
}

int bcast_ints(MPI_Comm comm, int root, int tag, std::vector<int>& data) {
  std::vector<int> ranks(static_cast<std::size_t>(comm->size()));
  for (int r = 0; r < comm->size(); ++r) ranks[r] = r;
  return bcast_ints(comm, ranks, root, tag, data);
}

MPI_Comm adopt_side(const std::vector<int>& local, const std::vector<int>& remote,
                    std::uint32_t context, std::uint32_t local_context, bool low) {
  return adopt(local_context, local_count(local), [&]() -> MPI_Comm {
    const int world_size = world()->size();
    auto side = new Comm(local, context, world_size);
    auto inter = std::make_shared<Comm::Inter>();
    inter->remote = remote;
    inter->local = std::make_unique<Comm>(local, local_context, world_size);
    inter->low = low;
    side->inter = std::move(inter);
    define_in_trace(*side);
    return side;
  });
}

int dup(MPI_Comm comm, std::string_view function, int tag, MPI_Comm* newcomm) {
  // The leaders agree on the new shared context (the larger proposal; each is unique in the
  // job); each side's leader picks its own hidden context.
  std::vector<int> info;
  int rc = MPI_SUCCESS;
  if (comm->my_rank() == 0) {
    const std::vector<int> out{static_cast<int>(allocate_context())};
    std::vector<int> in;
    rc = swap(comm, 0, tag, out, in);
    if (rc == MPI_SUCCESS && in.size() != 1) rc = MPI_ERR_INTERN;
    info = {rc, rc == MPI_SUCCESS ? std::max(out[0], in[0]) : 0,
            static_cast<int>(allocate_context())};
  }
  rc = bcast_ints(local_group(comm), 0, tag, info);
  if (rc == MPI_SUCCESS && info.size() == 3) rc = info[0];
  if (rc != MPI_SUCCESS) {
    *newcomm = MPI_COMM_NULL;
    return raise(comm, function, rc, "the exchange between the groups' leaders failed");
  }
  *newcomm = adopt_side(comm->members, comm->inter->remote, static_cast<std::uint32_t>(info[1]),
                        static_cast<std::uint32_t>(info[2]), comm->inter->low);
  return MPI_SUCCESS;
}

int check_rooted_creation(std::string_view function, MPI_Comm comm, int root, const MPI_Comm* out,
                          std::string_view out_name) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter()) {
    return raise(comm, function, MPI_ERR_COMM,
                 "comm is an intercommunicator, expected an intracommunicator");
  }
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (out == nullptr) {
    return raise(comm, function, MPI_ERR_ARG,
                 std::string(out_name) + " = NULL, expected where to store the intercommunicator");
  }
  return MPI_SUCCESS;
}

}  // namespace weft::mpi::inter
