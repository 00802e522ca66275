// What intercommunicators are built from: both groups' leaders swap what their group knows, in a
// communicator's collective context, and each leader spreads the outcome through its own group;
// then the members of each process take the one object of their side (comm/comm_registry.h).
// Everything travels as point-to-point messages, so it works inside a process and between
// processes alike.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "comm/communicator.h"
#include "mpi.h"

namespace weft::mpi::inter {

// Tags of the creation messages in a communicator's collective context, apart from the
// collectives' own (0 .. 2^30 - 1, spanning::tag_of): MPI_Intercomm_create's leaders use
// 2^30 + tag on peer_comm, MPI_Comm_create_group -2 - tag on comm, MPI_Comm_create_from_group
// a hash of its string tag below those on the world.
inline int intercomm_create_tag(int tag) {
  return (1 << 30) + tag;
}
inline int create_group_tag(int tag) {
  return -2 - tag;
}
// Concurrent calls differ by string tag (MPI-4.1 7.4.2): two tags of one rank's concurrent calls
// colliding in these 29 bits (FNV-1a) would cross their messages.
inline int create_from_group_tag(std::string_view stringtag) {
  std::uint32_t hash = 2166136261u;
  for (const char c : stringtag) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return -(1 << 30) - 2 - static_cast<int>(hash & ((1u << 29) - 1));
}

// The checks every member makes in the calls that give an intercommunicator through a root of an
// intracommunicator (spawn, accept, connect): MPI initialized, `comm` an intracommunicator,
// `root` one of its ranks, `out` (named `out_name`) somewhere to store the result.
int check_rooted_creation(std::string_view function, MPI_Comm comm, int root, const MPI_Comm* out,
                          std::string_view out_name);

// The tag of the caller's next collective call on `comm` (taking its number).
int next_call_tag(MPI_Comm comm);

// The caller sends `out` to `peer` (a peer rank of `comm`) and receives what it sends back, in
// comm's collective context under `tag`. Returns an MPI error class.
int swap(MPI_Comm comm, int peer, int tag, const std::vector<int>& out, std::vector<int>& in);

// Broadcasts `data` (its size too) from `ranks[root]` to the members of `comm` listed in `ranks`
// (comm ranks; the caller among them), along a binomial tree, in comm's collective context.
int bcast_ints(MPI_Comm comm, const std::vector<int>& ranks, int root, int tag,
               std::vector<int>& data);
// The same among every member of `comm`.
int bcast_ints(MPI_Comm comm, int root, int tag, std::vector<int>& data);

// The caller's side of an intercommunicator, shared with the members of its local group in this
// process: `local` and `remote` in rank order (world ranks), `context` shared by both sides,
// `local_context` (unique to this side) for the hidden intracommunicator of the local group.
MPI_Comm adopt_side(const std::vector<int>& local, const std::vector<int>& remote,
                    std::uint32_t context, std::uint32_t local_context, bool low);

// The hidden intracommunicator of an intercommunicator's local group.
inline MPI_Comm local_group(MPI_Comm comm) {
  return comm->inter->local.get();
}

// MPI_Comm_dup of an intercommunicator, for the caller: the same groups in a new context; `tag`
// is that of the caller's collective call (taken when the call was made).
int dup(MPI_Comm comm, std::string_view function, int tag, MPI_Comm* newcomm);

// MPI_Comm_split of an intercommunicator, for the caller (comm/intercomm_split.cpp).
int split(MPI_Comm comm, int color, int key, std::string_view function, MPI_Comm* newcomm);

}  // namespace weft::mpi::inter
