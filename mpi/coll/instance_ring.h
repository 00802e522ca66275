// Where the members of a communicator find the shared object of a nonblocking or persistent
// collective call (mpi/coll/nbc.h) without a lock or an allocation of the table's own.
//
// Every member numbers its ring calls alike (CallNumber::instance, or a persistent request's start
// count): call s meets in slot s % kSlots, whose turns are s / kSlots. The slot's state word holds
// the turn it serves, whether a call of that turn holds it (busy), and how many later turns were
// diverted. The first member of a turn claims the slot with a compare-and-swap and publishes the
// object; the others find it with a load; the last member to join hands the slot to the next turn
// that was not diverted. A small nonblocking collective then joins through one cache line (the
// slot's), where the table's map took the communicator's mutex and a map node per call.
//
// MPI lets a member issue any number of nonblocking collectives before the others issue their
// first, so a member whose slot still serves an older turn cannot wait for it: it diverts its call
// to the table's map (MeetingTable::join_entry) and counts the diversion in the state word, with
// a compare-and-swap that either comes before the older turn's release (which then skips the
// diverted turns) or fails and sees the released state. Every member of a call therefore takes
// the same road: the ring when the slot reached the call's turn before any member came to it
// early, else the map.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <typeinfo>

namespace weft::mpi {

class InstanceRing {
 public:
  static constexpr int kSlots = 16;

  enum class Outcome {
    joined,      // `object` is the call's
    diverted,    // the call meets in the map
    other_kind,  // the slot's call is of another type (`other_function`)
    other_call,  // the slot's call has another call number (`other_call`, `other_function`)
  };
  struct Joined {
    Outcome outcome = Outcome::diverted;
    std::shared_ptr<void> object;
    std::uint64_t other_call = 0;
    std::string_view other_function;
  };

  InstanceRing() = default;
  InstanceRing(const InstanceRing&) = delete;
  InstanceRing& operator=(const InstanceRing&) = delete;

  // The object of the caller's ring call `sequence` (communicator call `call`, of type `type`)
  // among `size` members, made by make() for the first member; never waits for another member.
  Joined join(std::uint64_t sequence, std::uint64_t call, int size, const std::type_info& type,
              std::string_view function, const std::function<std::shared_ptr<void>()>& make);

  // The function of the call numbered `call` while it holds a slot, or empty: for the message
  // of a mismatch, once the job is ending.
  std::string_view function_of(std::uint64_t call) const;

 private:
  // On a line of its own: the members of a call touch it and nothing else of the ring. The state
  // word: the turn in its top 40 bits (compared as serial numbers: the members of a communicator
  // are never 2^39 turns apart), the count of diverted turns after it in the next 23, the busy bit
  // last.
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> state{0};
    std::atomic<int> joined{0};  // members of the busy turn that have taken the object
    // Set by the turn's first member once the fields below are written.
    std::atomic<bool> ready{false};
    // relaxed: written before `ready` (release), read after it (acquire); atomic only so that
    // function_of may read it from another thread.
    std::atomic<std::uint64_t> call{0};
    const std::type_info* type = nullptr;
    std::string_view function;
    std::shared_ptr<void> object;
  };

  // Takes the caller's copy of the slot's object; the last member hands the slot on.
  static std::shared_ptr<void> take(Slot& slot, int size);
  // Hands the slot to the next turn not diverted.
  static void release(Slot& slot);
  [[noreturn]] static void too_many_outstanding(std::string_view function);

  Slot slots_[kSlots];
};

}  // namespace weft::mpi
