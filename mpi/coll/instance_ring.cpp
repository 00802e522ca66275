#include "coll/instance_ring.h"

#include <string>

#include "init/fatal.h"
#include "weft/sync.h"

namespace weft::mpi {

namespace {

// The layout of Slot::state (instance_ring.h): 40 bits of turn, 23 of diverted count, busy.
constexpr int kTurnShift = 24;
constexpr std::uint64_t kBusy = 1;
constexpr std::uint64_t kMaxDiverted = (std::uint64_t{1} << (kTurnShift - 1)) - 1;

// How many turns `turn` comes after the one `state` serves (negative: before), as serial numbers
// of 40 bits.
std::int64_t turns_after(std::uint64_t turn, std::uint64_t state) {
  return static_cast<std::int64_t>((turn - (state >> kTurnShift)) << kTurnShift) >> kTurnShift;
}

std::uint64_t diverted_of(std::uint64_t state) {
  return (state >> 1) & kMaxDiverted;
}

// The state of the first turn after `state`'s that was not diverted, free.
std::uint64_t released(std::uint64_t state) {
  return ((state >> kTurnShift) + diverted_of(state) + 1) << kTurnShift;
}

}  // namespace

InstanceRing::Joined InstanceRing::join(std::uint64_t sequence, std::uint64_t call, int size,
                                        const std::type_info& type, std::string_view function,
                                        const std::function<std::shared_ptr<void>()>& make) {
  Slot& slot = slots_[sequence % kSlots];
  const std::uint64_t turn = sequence / kSlots;
  // acquire: pairs with release()'s, which hands the slot over cleared.
  std::uint64_t state = slot.state.load(std::memory_order_acquire);
  for (;;) {
    const std::int64_t ahead = turns_after(turn, state);
    // Passed: some member came to this call while the slot served an older turn.
    if (ahead < 0) return {};
    if (ahead > 0) {
      // The slot serves an older turn (busy: this member joined it or diverted it already).
      if (diverted_of(state) >= static_cast<std::uint64_t>(ahead)) return {};
      if (static_cast<std::uint64_t>(ahead) > kMaxDiverted) too_many_outstanding(function);
      const std::uint64_t marked =
          (state & ~(kMaxDiverted << 1)) | static_cast<std::uint64_t>(ahead) << 1;
      // The diversion carries no data (the compare-and-swap orders it against the release of
      // the older turn, itself a read-modify-write of the same word); acquire on success only
      // because the failure's acquire (the next look reads the slot) may not be stronger
      // (GCC's -Winvalid-memory-model, an error in the sanitizer builds).
      if (slot.state.compare_exchange_weak(state, marked, std::memory_order_acquire,
                                           std::memory_order_acquire)) {
        return {};
      }
      continue;
    }
    if ((state & kBusy) != 0) break;
    // acquire: the slot as the previous turn's release left it.
    if (!slot.state.compare_exchange_weak(state, state | kBusy, std::memory_order_acquire,
                                          std::memory_order_acquire)) {
      continue;
    }
    // The slot's fields are the caller's until `ready`: the others of this turn wait for it.
    slot.object = make();
    slot.type = &type;
    slot.function = function;
    slot.call.store(call, std::memory_order_relaxed);
    slot.ready.store(true, std::memory_order_release);  // release: publishes the fields
    return {Outcome::joined, take(slot, size), call, {}};
  }
  // acquire: pairs with the first member's release of `ready`.
  if (!slot.ready.load(std::memory_order_acquire)) {
    // The first member is between its claim and `ready`, which it sets without waiting.
    weft::wait_until([&] { return slot.ready.load(std::memory_order_acquire); });
  }
  const std::uint64_t other = slot.call.load(std::memory_order_relaxed);
  if (*slot.type != type) return {Outcome::other_kind, nullptr, other, slot.function};
  if (other != call) return {Outcome::other_call, nullptr, other, slot.function};
  return {Outcome::joined, take(slot, size), call, {}};
}

std::shared_ptr<void> InstanceRing::take(Slot& slot, int size) {
  std::shared_ptr<void> object = slot.object;
  // acq_rel: the last member sees every member's copy made before it clears the slot.
  if (slot.joined.fetch_add(1, std::memory_order_acq_rel) + 1 == size) release(slot);
  return object;
}

void InstanceRing::release(Slot& slot) {
  slot.object.reset();
  // relaxed: published by the release below.
  slot.ready.store(false, std::memory_order_relaxed);
  slot.joined.store(0, std::memory_order_relaxed);
  std::uint64_t state = slot.state.load(std::memory_order_relaxed);
  // release: the next turn's first member sees the slot cleared. A failure means a member of a
  // later turn counted a diversion: the new count is in `state`.
  while (!slot.state.compare_exchange_weak(state, released(state), std::memory_order_release,
                                           std::memory_order_relaxed)) {
  }
}

std::string_view InstanceRing::function_of(std::uint64_t call) const {
  for (const Slot& slot : slots_) {
    // The job is ending: a slot found here is held by a call whose members wait for one another.
    if (slot.ready.load(std::memory_order_acquire) &&
        slot.call.load(std::memory_order_relaxed) == call) {
      return slot.function;
    }
  }
  return {};
}

void InstanceRing::too_many_outstanding(std::string_view function) {
  end_job(std::string(function) + ": more than " +
          std::to_string(kMaxDiverted * static_cast<std::uint64_t>(kSlots)) +
          " nonblocking collectives outstanding on one communicator, expected fewer (each one "
          "waits for a member that has not made it yet)");
}

}  // namespace weft::mpi
