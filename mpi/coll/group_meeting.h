// The caller's part, inside its own process, of a collective call on a communicator that spans
// processes: the members of its group (mpi/comm/communicator.h, Groups) meet in one Meeting of the
// communicator for the call, as a blocking collective inside a process does, so that they copy
// between one another's buffers and only the groups' heads cross processes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/meeting.h"
#include "comm/communicator.h"
#include "mpi.h"
#include "pt2pt/message.h"

namespace weft::mpi::spanning {

class GroupMeeting {
 public:
  // Joins the meeting of the call with message tag `tag` on `comm`. A member whose call is of
  // the other kind (blocking or nonblocking, kNonblockingCollectiveTag) ends the job.
  GroupMeeting(MPI_Comm comm, int tag)
      : groups_(comm->groups), me_(comm->my_rank()), meeting_(join(comm, tag)) {}

  int me() const { return me_; }
  // The comm ranks of the caller's group, ascending.
  const std::vector<int>& ranks() const { return groups_.ranks[groups_.local]; }
  const Comm::Groups& groups() const { return groups_; }
  int count() const { return static_cast<int>(groups_.ranks.size()); }
  // The comm ranks of group `g`, ascending.
  const std::vector<int>& ranks_of(int g) const {
    return groups_.ranks[static_cast<std::size_t>(g)];
  }
  // The member of group `g` that crosses processes for it: `root` in the root's group, else the
  // group's lowest comm rank.
  int head(int g, int root) const {
    return groups_.group_of[root] == g ? root : groups_.ranks[g].front();
  }
  int head(int g) const { return groups_.ranks[g].front(); }
  int group() const { return groups_.local; }

  // Publishes the caller's side; it must stay valid until the caller's last phase.
  void publish(const void* side) { meeting_->publish(groups_.slot_of[me_], side); }
  // The side member `rank` (of the caller's group) published.
  template <class Side>
  const Side& of(int rank) {
    return meeting_->arguments_of<Side>(groups_.slot_of[rank]);
  }
  // Returns when every member of the group has called it.
  void phase() { meeting_->phase(); }

  // What one member (a head) tells the whole group: set before a phase, read after it.
  void tell(int rc) { meeting_->shared = std::make_shared<int>(rc); }
  int told() const {
    return meeting_->shared != nullptr ? *static_cast<const int*>(meeting_->shared.get())
                                       : MPI_SUCCESS;
  }

 private:
  // Spanning calls key their meetings apart from the call numbers of the communicator's own
  // meetings (communicator creation joins by call number too).
  static constexpr std::uint64_t kSpanningCalls = std::uint64_t{1} << 63;
  // A distinct type, so that the table tells the two kinds of call apart.
  struct NonblockingMeeting : Meeting {
    using Meeting::Meeting;
  };

  std::shared_ptr<Meeting> join(MPI_Comm comm, int tag) const {
    const int size = static_cast<int>(ranks().size());
    const int both_kinds = tag & ~kNonblockingCollectiveTag;
    const std::uint64_t key = kSpanningCalls | static_cast<std::uint32_t>(both_kinds);
    const auto call = static_cast<std::uint64_t>(call_of_tag(both_kinds));
    if ((tag & kNonblockingCollectiveTag) != 0) {
      return comm->meetings.join<NonblockingMeeting>(
          key, call, size, "a nonblocking collective",
          [size] { return std::make_shared<NonblockingMeeting>(size); });
    }
    return comm->meetings.join<Meeting>(key, call, size, "a blocking collective",
                                        [size] { return std::make_shared<Meeting>(size); });
  }

  const Comm::Groups& groups_;
  const int me_;
  const std::shared_ptr<Meeting> meeting_;
};

// A failure class several members may report into one member's side before a phase.
class SharedFailure {
 public:
  // Const: sides are published as const, and this is the one part of a side others write.
  void report(int rc) const {
    int none = MPI_SUCCESS;
    // relaxed: read by the side's owner after a phase, which orders it.
    failure_.compare_exchange_strong(none, rc, std::memory_order_relaxed);
  }
  int get() const { return failure_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int> failure_{MPI_SUCCESS};
};

}  // namespace weft::mpi::spanning
