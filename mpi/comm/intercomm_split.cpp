// MPI_Comm_split and MPI_Comm_create on an intercommunicator (MPI-4.1 7.4.2): the members of
// each color form a new intercommunicator, its local group the caller's group's members of that
// color, its remote group the other group's, each ordered by key then rank; a color found in one
// group only gives MPI_COMM_NULL. MPI_Comm_create is the split whose color is membership of the
// group passed and whose key is the group rank.
//
// Each group's rank 0 gathers its group's colors and keys, proposes a shared context for each
// color and takes a hidden context per color for its side, swaps the lists with the other leader
// and sends both groups' lists through its group.
#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "coll/spanning_exchange.h"
#include "comm/intercomm.h"
#include "errhan/error.h"

namespace weft::mpi::inter {

namespace {

// One group's lists, as the leaders swap them: n, then n colors, keys and context proposals.
struct Lists {
  std::vector<int> colors;
  std::vector<int> keys;
  std::vector<int> proposals;  // the shared context this group proposes for each rank's color

  void append_to(std::vector<int>& out) const {
    out.push_back(static_cast<int>(colors.size()));
    out.insert(out.end(), colors.begin(), colors.end());
    out.insert(out.end(), keys.begin(), keys.end());
    out.insert(out.end(), proposals.begin(), proposals.end());
  }
  // Reads the lists at `at`, moving it past them; false when `in` is too short.
  bool read(const std::vector<int>& in, std::size_t& at) {
    if (at >= in.size()) return false;
    const auto n = static_cast<std::size_t>(in[at++]);
    if (in.size() - at < 3 * n) return false;
    colors.assign(in.begin() + at, in.begin() + at + n);
    keys.assign(in.begin() + at + n, in.begin() + at + 2 * n);
    proposals.assign(in.begin() + at + 2 * n, in.begin() + at + 3 * n);
    at += 3 * n;
    return true;
  }
};

// The world ranks of the members of `color`, by key then rank.
std::vector<int> members_of_color(const Lists& lists, const std::vector<int>& world_ranks,
                                  int color) {
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(lists.colors.size()); ++r) {
    if (lists.colors[r] == color) ranks.push_back(r);
  }
  std::stable_sort(ranks.begin(), ranks.end(),
                   [&](int a, int b) { return lists.keys[a] < lists.keys[b]; });
  std::vector<int> out;
  for (int r : ranks) out.push_back(world_ranks[static_cast<std::size_t>(r)]);
  return out;
}

// At the leader: gathers the group's colors and keys and makes the message for the group:
// {rc, local lists, hidden context per local rank, remote lists}.
std::vector<int> lead(MPI_Comm comm, int color, int key, int tag) {
  const MPI_Comm group = local_group(comm);
  const int n = group->size();
  std::vector<int> pairs(2 * static_cast<std::size_t>(n));
  pairs[0] = color;
  pairs[1] = key;
  {
    spanning::Exchange exchange(group, tag);
    for (int r = 1; r < n; ++r) exchange.receive(r, &pairs[2 * r], 2, MPI_INT);
    if (int rc = exchange.wait(); rc != MPI_SUCCESS) return {rc};
  }
  Lists mine;
  std::map<int, std::pair<int, int>> contexts;  // color -> (shared proposal, hidden context)
  for (int r = 0; r < n; ++r) {
    const int c = pairs[2 * r];
    mine.colors.push_back(c);
    mine.keys.push_back(pairs[2 * r + 1]);
    if (c != MPI_UNDEFINED && contexts.count(c) == 0) {
      contexts[c] = {static_cast<int>(allocate_context()), static_cast<int>(allocate_context())};
    }
    mine.proposals.push_back(c == MPI_UNDEFINED ? 0 : contexts[c].first);
  }
  std::vector<int> out;
  mine.append_to(out);
  std::vector<int> in;
  if (int rc = swap(comm, 0, tag, out, in); rc != MPI_SUCCESS) return {rc};
  std::vector<int> message{MPI_SUCCESS};
  mine.append_to(message);
  for (int c : mine.colors) message.push_back(c == MPI_UNDEFINED ? 0 : contexts[c].second);
  message.insert(message.end(), in.begin(), in.end());
  return message;
}

}  // namespace

int split(MPI_Comm comm, int color, int key, std::string_view function, MPI_Comm* newcomm) {
  const int tag = next_call_tag(comm);
  const MPI_Comm group = local_group(comm);
  std::vector<int> message;
  if (group->my_rank() == 0) {
    message = lead(comm, color, key, tag);
  } else {
    spanning::Exchange exchange(group, tag);
    const int pair[2] = {color, key};
    exchange.send(0, pair, 2, MPI_INT);
    if (int rc = exchange.wait(); rc != MPI_SUCCESS) message = {rc};
  }
  // A member whose send failed still takes part in the broadcast, so that nobody waits forever.
  int rc = bcast_ints(group, 0, tag, message);
  Lists local;
  Lists remote;
  std::size_t at = 1;
  if (rc == MPI_SUCCESS && message.empty()) rc = MPI_ERR_INTERN;
  if (rc == MPI_SUCCESS) rc = message[0];
  if (rc == MPI_SUCCESS && !local.read(message, at)) rc = MPI_ERR_INTERN;
  const std::size_t hidden_at = at;
  at += local.colors.size();
  if (rc == MPI_SUCCESS && (at > message.size() || !remote.read(message, at))) {
    rc = MPI_ERR_INTERN;
  }
  *newcomm = MPI_COMM_NULL;
  if (rc != MPI_SUCCESS) {
    return raise(comm, function, rc, "the exchange of colors between the groups failed");
  }
  if (color == MPI_UNDEFINED) return MPI_SUCCESS;
  const std::vector<int> remote_members = members_of_color(remote, comm->inter->remote, color);
  if (remote_members.empty()) return MPI_SUCCESS;
  const std::vector<int> local_members = members_of_color(local, comm->members, color);
  const int me = comm->my_rank();
  const auto remote_rank = static_cast<std::size_t>(
      std::find(remote.colors.begin(), remote.colors.end(), color) - remote.colors.begin());
  const int shared = std::max(local.proposals[me], remote.proposals[remote_rank]);
  const int hidden = message[hidden_at + static_cast<std::size_t>(me)];
  *newcomm = adopt_side(local_members, remote_members, static_cast<std::uint32_t>(shared),
                        static_cast<std::uint32_t>(hidden), comm->inter->low);
  (*newcomm)->local_of_caller().errhandler = comm->local_of_caller().errhandler;
  return MPI_SUCCESS;
}

}  // namespace weft::mpi::inter
