// A communicator is one object shared by all its member ranks of this process: the membership,
// the matching context and the collective meeting table are common, while what MPI makes local to
// a process (error handler, name, attributes, the count of collective calls) lives in one slot
// per member, touched only by that member's threads.
//
// MPI_COMM_SELF is one object too, but each rank sees it as its own one-member communicator:
// its comm rank is always 0 and its slot is the caller's place among `members` (every rank of
// its world).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attr/attribute_set.h"
#include "coll/meeting.h"
#include "mpi.h"

namespace weft::mpi {
struct Topology;  // topo/topology.h
}

struct weft_mpi_comm {
  struct Local {
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
    std::string name;
    weft::mpi::AttributeSet attributes;
    std::uint64_t collectives = 0;  // collective calls made so far: the next one's number
    std::uint64_t places = 0;       // of them, those that met in the ring (coll/meeting.h)
    std::uint64_t instances = 0;    // of them, those that joined an instance (CallNumber)
    bool freed = false;             // MPI_Comm_free called by this member
    // The process topology as this member sees it (MPI-4.1 8), null when none.
    std::shared_ptr<const weft::mpi::Topology> topology;
    // The info hints in effect for this member (comm/comm_dup.h), in the order set.
    std::vector<std::pair<std::string, std::string>> hints;

    // The numbers of the member's next collective call, which meets in the communicator's ring
    // (a blocking call inside the process) or not.
    weft::mpi::CallNumber next_call(bool in_ring) {
      return {collectives++, in_ring ? places++ : places, instances};
    }
    // The numbers of the member's next nonblocking collective or persistent init inside the
    // process, which joins an instance (MeetingTable::join<T>).
    weft::mpi::CallNumber next_instance_call() { return {collectives++, places, instances++}; }
  };

  weft_mpi_comm() = default;
  weft_mpi_comm(std::vector<int> world_ranks, std::uint32_t context, int world_size);

  // Point-to-point traffic matches in `context`; collective traffic in context + 1, so that the
  // two never match each other.
  std::uint32_t context = 0;
  bool self = false;   // MPI_COMM_SELF (the job's, or a spawned world's)
  bool world = false;  // MPI_COMM_WORLD (the job's, or a spawned world's: mpi/spawn/)
  // Some members live in other processes: collectives go through collective_spanning.h.
  bool spans_processes = false;
  // How the members sit in processes, set when spans_processes: one group per process holding
  // members, groups in order of their lowest comm rank, comm ranks ascending within each. A
  // spanning collective meets within the caller's group through shared memory and crosses
  // between groups through their leaders (the lowest comm rank of each).
  struct Groups {
    std::vector<std::vector<int>> ranks;  // group -> its comm ranks
    std::vector<int> group_of;            // comm rank -> group
    std::vector<int> slot_of;             // comm rank -> index within its group
    int local = -1;                       // the group of this process
    // Every group is a run of consecutive comm ranks: folding groups in order is rank order.
    bool consecutive = true;
  };
  Groups groups;
  std::vector<int> members;        // comm rank -> world rank
  std::vector<int> rank_of_world;  // world rank -> comm rank, -1 for non-members
  std::vector<Local> locals;       // by comm rank (by rank in `members` for MPI_COMM_SELF)
  // Set for one side of an intercommunicator (comm/intercomm.h): `members` is then the local group
  // and point-to-point peers are ranks of the remote group.
  struct Inter;
  std::shared_ptr<const Inter> inter;
  weft::mpi::MeetingTable meetings;  // collective calls and communicator creation
  // Members that have not freed the communicator yet; the last MPI_Comm_free deletes it (the
  // predefined ones are never deleted).
  std::atomic<int> references{0};

  int size() const { return self ? 1 : static_cast<int>(members.size()); }
  bool is_inter() const { return inter != nullptr; }
  // The number of ranks a point-to-point peer is chosen from: the remote group's size for an
  // intercommunicator, else size().
  int peer_count() const;
  // Comm rank of a world rank, -1 when not a member.
  int rank_of(int world_rank) const;
  // The world rank of a valid point-to-point peer: a comm rank, or a remote rank of an
  // intercommunicator.
  int world_rank(int peer) const;
  // The calling thread's comm rank, -1 when it is not a member (or not a rank).
  int my_rank() const;
  Local& local_of_caller();  // requires my_rank() >= 0
  // The same for the caller of world rank `world_rank`, looked up once by a call that needs it
  // again (every lookup of the caller's rank reads the current thread through thread-local data).
  Local& local_of(int world_rank) { return locals[rank_of_world[world_rank]]; }
};

// One side of an intercommunicator: what the members of the local group share about the other.
// The remote group is named by world ranks only, so it may be ranks started after this one (the
// dynamic processes of MPI-4.1 11.8 join the job as new ranks).
struct weft_mpi_comm::Inter {
  std::vector<int> remote;  // remote rank -> world rank
  // An intracommunicator of the local group, never handed to the program: the intercommunicator's
  // collectives exchange inside the group through it, in its collective context, under the
  // intercommunicator's call tags.
  std::unique_ptr<weft_mpi_comm> local;
  // Which group comes first where both sides must order the two groups alike (a merge whose
  // sides pass the same `high`).
  bool low = false;
};

namespace weft::mpi {

using Comm = weft_mpi_comm;

// A fresh pair of matching contexts (p2p, collective) for a new communicator of this process.
std::uint32_t allocate_context();

// Sets up MPI_COMM_WORLD (world ranks 0..world_size-1) and MPI_COMM_SELF for a new job.
void reset_predefined_comms(int world_size);

// Defines a communicator, once made whole (an intercommunicator's remote group set), in the trace
// being recorded, where it names the group of the messages sent on it (weft/trace_message.h).
// Nothing when no message is recorded.
void define_in_trace(const Comm& comm) noexcept;

}  // namespace weft::mpi
