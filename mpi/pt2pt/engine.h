// The matching engine of one rank: every message sent to the rank, from any transport, is matched
// here against the rank's receives, so MPI_ANY_SOURCE sees every sender alike.
//
// Two queues under one lock per rank: receives posted before their message arrived, and
// messages that arrived before their receive (unexpected). Both are searched in arrival order,
// which gives MPI's non-overtaking rule per (sender, communicator, tag) for free. Data is never
// copied under the lock except the small packing of an eager message.
//
// A blocking receive that finds nothing queued before it takes the engine's slot instead of the
// posted queue: its pattern, completion word and result live in the engine's first cache line,
// next to the lock, with room for 24 bytes of data. A small message then costs the sender one
// line from the receiver's core (taken by the lock, filled while held) and the receiver one
// line back, instead of the lock, queue, request, buffer and status lines of a posted request.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pt2pt/eager.h"
#include "pt2pt/message.h"
#include "request/request.h"
#include "util/intrusive_list.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

class alignas(64) Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // At the end of the job: empties the unexpected queue, giving back the messages it holds.
  void discard_unreceived();

  // A send to this engine's rank, from any thread. With a matching posted receive the data is
  // copied straight across and both complete; else a standard or ready send of at most
  // `eager_limit` bytes leaves an eager copy and completes; else the send's own rendezvous
  // message is queued and the send completes when a receive has copied from its buffer.
  // A message left queued gets a key, written to *queued_key (when not null) before the call
  // returns: MPI_Cancel withdraws the message with it (withdraw()).
  void send(Request& send, const Envelope& envelope, std::size_t eager_limit,
            std::uint64_t* queued_key = nullptr);

  // A message from another process, its `envelope.bytes` of data at `data` (valid for the call
  // only): copied into a matching receive, else queued as an eager copy.
  // `key`: the message's sender_key (remote_message_key).
  void arrive_eager(const Envelope& envelope, const void* data, std::uint64_t key);
  // A message from another process whose data is still there (ops->deliver_later set): a
  // matching receive starts fetching it, else it is queued until one comes.
  void arrive(weft_mpi_message& message);

  // A receive of this engine's rank: takes the first matching unexpected message (and completes
  // the receive), or queues the receive.
  void post(Request& recv);
  // A blocking receive of this engine's rank (a request on the caller's stack): like post(),
  // through the slot when it is free and nothing is queued, and waits for the data. Returns with
  // recv.status written.
  void receive_blocking(Request& recv, SpinBudget& budget);
  // MPI_Recv's own path, with no request, for `count` elements of `datatype` (predefined: nothing
  // may free it meanwhile) at `buffer`: takes the first matching unexpected message, else waits
  // in the slot when it is free and no receive is posted; then writes `status` and returns true.
  // Else does nothing and returns false (receive_blocking() then, which queues the receive).
  bool receive_now(const Pattern& pattern, void* buffer, int count, MPI_Datatype datatype,
                   MPI_Status& status, SpinBudget& budget);

  // Cancels a receive still queued (true), or does nothing when it was matched (false).
  bool cancel_recv(Request& recv);
  // Withdraws a send's rendezvous message still unmatched (true; the send is not completed).
  bool cancel_send(Request& send);
  // Takes the message queued under `key` (send()'s queued_key, or remote_message_key) out of the
  // queue while unmatched, or returns nullptr; the caller releases it (an eager copy goes back
  // to its pool, the rendezvous message of an internal Bsend send completes that send).
  weft_mpi_message* withdraw(std::uint64_t key);

  // The first unexpected message matching `pattern`, or nullptr; its envelope goes to *found.
  // With `take` the message leaves the queue and belongs to the caller (MPI_Mprobe): it is then
  // received with receive(). Without, the pointer only says that one was there.
  weft_mpi_message* find(const Pattern& pattern, bool take, Envelope* found);
  // The same, waiting (spin, then park) until one arrives.
  weft_mpi_message* wait_for(const Pattern& pattern, bool take, Envelope* found,
                             SpinBudget& budget);

  // Delivers a message taken from the queue into `recv` and completes it.
  static void receive(Request& recv, weft_mpi_message& message);

  // What the tools interface reads (mpi/mpi_t/): messages that reached this rank, messages it
  // sent, and the unexpected queue's length now. Read from any thread, without the lock.
  std::uint64_t messages_arrived() const { return arrived_.load(std::memory_order_relaxed); }
  std::uint64_t messages_sent() const { return sent_.load(std::memory_order_relaxed); }
  std::uint64_t unexpected_length() const {
    return unexpected_length_.load(std::memory_order_relaxed);
  }
  // The envelopes of the messages waiting for a receive, in arrival order (the deadlock report's
  // unmatched sends).
  std::vector<Envelope> unexpected_envelopes();

  // By a send of this engine's rank. A load and a store rather than an atomic add, so that the
  // count costs a send nothing: sends made at once by several threads of the rank may lose one.
  void count_sent() { bump(sent_, 1); }

 private:
  // A thread parked in wait_for(), woken by the arrival of a message it may want.
  struct Prober {
    Pattern pattern;
    Parker* parker;
    Prober* next = nullptr;
    Prober* prev = nullptr;
  };

  // Both under lock_.
  void enqueue(weft_mpi_message* message);
  // Under lock_: `recv`, a receive of a collective between processes, and a message from
  // `sender` for the same call of the other kind (blocking or nonblocking) met. Ends the job.
  [[noreturn]] void collective_kinds_differ(const Request& recv, int sender);
  weft_mpi_message* take_match(const Pattern& pattern);
  // Where an arriving message goes, with lock_ held: into the posted slot (to_slot(), which
  // must unlock), to a posted receive (to_receive(recv), unlocked) or nowhere yet (to_queue(),
  // which must unlock).
  template <class ToSlot, class ToReceive, class ToQueue>
  void route(const Envelope& envelope, ToSlot&& to_slot, ToReceive&& to_receive,
             ToQueue&& to_queue);
  // Under lock_, with the slot free: posts the receive there, unlocks, waits for the data and
  // writes `status`.
  void receive_in_slot(const Pattern& pattern, void* buffer, int count, MPI_Datatype datatype,
                       MPI_Status& status, SpinBudget& budget);
  // Under lock_, with the slot posted and matching: takes it for a message with `envelope`.
  void take_slot(const Envelope& envelope);
  // Then, still under lock_: copies the message's data in, unlocks and completes the slot.
  void fill_slot(const void* data, std::size_t count, const Datatype& type);

  // The first cache line: the lock and the slot.
  enum class SlotState : std::uint8_t { free, posted, taken };
  detail::SpinLock lock_;
  // Changed under lock_, except the owner's release of a taken slot (a store, no lock: the slot
  // is the owner's then, and "taken" and "free" both mean "not for you" to a sender).
  std::atomic<SlotState> slot_state_{SlotState::free};
  Pattern slot_pattern_;
  // The result, written by the sender that took the slot; data that fits travels in the line
  // itself, and the receiver copies it out on its own core.
  Completion slot_done_;
  int slot_source_ = 0;
  int slot_tag_ = 0;
  std::size_t slot_bytes_ = 0;
  static constexpr std::size_t kSlotInlineBytes = 24;
  unsigned char slot_inline_[kSlotInlineBytes];
  // While a trace is recorded, the line's last word carries the sender's trace stamp
  // (trace::message_stamp) where the message leaves it free (up to 16 bytes inline, or not inline
  // at all): the receive's end then reads no clock (trace::received_after). 0 where no sender
  // wrote one (take_slot).
  static constexpr std::size_t kSlotStampAt = 16;
  static bool slot_has_stamp(std::size_t bytes) {
    return bytes <= kSlotStampAt || bytes > kSlotInlineBytes;
  }
  // The second line: where a message that does not fit goes.
  alignas(64) void* slot_buffer_ = nullptr;
  MPI_Datatype slot_datatype_ = MPI_DATATYPE_NULL;
  int slot_count_ = 0;
  // The sender's copy into slot_buffer_, which the slot's receiver helps while it waits.
  alignas(64) SharedCopy slot_copy_;

  // relaxed, changed by load and store: under lock_ (arrived_, unexpected_length_) or by the
  // rank's own sends (sent_), and only read elsewhere.
  static void bump(std::atomic<std::uint64_t>& counter, std::int64_t by) {
    counter.store(counter.load(std::memory_order_relaxed) + static_cast<std::uint64_t>(by),
                  std::memory_order_relaxed);
  }

  alignas(64) IntrusiveList<Request> posted_;
  std::atomic<std::uint64_t> arrived_{0};
  std::atomic<std::uint64_t> unexpected_length_{0};
  IntrusiveList<weft_mpi_message> unexpected_;
  std::uint64_t eager_keys_ = 0;  // the last sender_key given out; under lock_
  IntrusiveList<Prober> probers_;
  EagerPool eager_;
  alignas(64) std::atomic<std::uint64_t> sent_{0};
};

// Writes a receive's status for a delivered message: into a receive of `capacity` bytes, `moved`
// of the message's came.
void set_received_status(MPI_Status& status, const Envelope& envelope, std::size_t capacity,
                         std::size_t moved);
void set_received_status(Request& recv, const Envelope& envelope, std::size_t moved);

}  // namespace weft::mpi
