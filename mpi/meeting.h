// Where the members of a communicator meet for a collective call inside the process. The n-th
// collective call of every member (on one communicator) joins the same Meeting: each member
// publishes a description of its side of the call (buffers, counts, types), reads the others',
// and the members synchronise through the meeting's phases. Because ranks share the address
// space, a collective then copies straight between the members' buffers.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "weft/sync.h"

namespace weft::mpi {

class Meeting {
 public:
  explicit Meeting(int size);

  int size() const { return size_; }

  // Publishes the caller's arguments for the others to read; `args` must stay valid until the
  // caller has passed the meeting's last phase that reads it.
  void publish(int rank, const void* args);
  // The arguments `rank` published, parking until it has.
  const void* arguments(int rank);
  template <class Args>
  const Args& arguments_of(int rank) {
    return *static_cast<const Args*>(arguments(rank));
  }
  // The arguments `rank` published, or nullptr when it has not yet.
  const void* try_arguments(int rank) const;

  // Every member calls it; returns when all have. True in exactly one member per phase (the
  // last to arrive), which may then do work for all before the next phase.
  bool phase();

  // One value for all members, written by one member before a phase and read after it.
  std::shared_ptr<void> shared;

 private:
  struct Slot {
    std::atomic<const void*> args{nullptr};
    Event published;
  };
  const int size_;
  std::unique_ptr<Slot[]> slots_;
  Barrier barrier_;
};

// The meetings of one communicator, by call number.
class MeetingTable {
 public:
  // The meeting of call number `call` among `size` members, created by the first of them to
  // join and forgotten by the table when the last one has joined (members keep it alive).
  std::shared_ptr<Meeting> join(std::uint64_t call, int size);

 private:
  struct Entry {
    std::shared_ptr<Meeting> meeting;
    int joined = 0;
  };
  Mutex mutex_;
  std::unordered_map<std::uint64_t, Entry> entries_;
};

}  // namespace weft::mpi
