#include "pt2pt/engine.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "init/fatal.h"
#include "weft/trace_message.h"

namespace weft::mpi {

namespace {

// The local rendezvous payload: the sender's own buffer, read by the receiver in place.
// A large one is shared with the sender, which waits for it (SharedCopy).
std::size_t deliver_rendezvous(weft_mpi_message& message, void* buffer, std::size_t count,
                               const Datatype& type) {
  Request& send = *static_cast<RendezvousMessage&>(message).request;
  if (message.envelope.bytes == 0) return 0;
  return copy(send.shared_copy, send.buffer, static_cast<std::size_t>(send.count), *send.datatype,
              buffer, count, type);
}

void release_rendezvous(weft_mpi_message& message) {
  Request& send = *static_cast<RendezvousMessage&>(message).request;
  send.status.MPI_ERROR = MPI_SUCCESS;
  finish(send);
}

const PayloadOps kRendezvousOps = {&deliver_rendezvous, &release_rendezvous, nullptr};

}  // namespace

namespace {

// A queued message's flow id in a trace: from remote_message_key for a message from another
// process, else from the message's address, which no other queued message shares.
std::uint64_t flow_id(const weft_mpi_message* message, std::uint64_t sender_key) {
  constexpr std::uint64_t kRemote = std::uint64_t{1} << 44;
  if (sender_key >= kRemote) {
    return trace::remote_message_id(static_cast<int>((sender_key >> 44) - 1), trace::process(),
                                    sender_key & (kRemote - 1));
  }
  return trace::local_message_id(message);
}

trace::MessageInfo message_info(int peer, const Envelope& envelope) {
  return {peer, envelope.tag, envelope.bytes, envelope.context};
}

}  // namespace

void set_received_status(MPI_Status& status, const Envelope& envelope, std::size_t capacity,
                         std::size_t moved) {
  status.MPI_SOURCE = envelope.source;
  status.MPI_TAG = envelope.tag;
  status.MPI_ERROR = envelope.bytes > capacity ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  status.weft_cancelled = 0;
  status.weft_bytes = static_cast<MPI_Count>(moved);
}

void set_received_status(Request& recv, const Envelope& envelope, std::size_t moved) {
  set_received_status(recv.status, envelope,
                      static_cast<std::size_t>(recv.count) * recv.datatype->size(), moved);
}

namespace {

// Delivers a message taken from the queue into `count` elements of `type` at `buffer`, writing
// `status` (Engine::receive for a request, Engine::receive_now for MPI_Recv without one).
void deliver_to(weft_mpi_message& message, void* buffer, int count, const Datatype& type,
                MPI_Status& status) {
  const Envelope envelope = message.envelope;  // the message is gone after release()
  if (trace::enabled(trace::Category::message)) [[unlikely]]
    trace::message_matched(flow_id(&message, message.sender_key),
                           message_info(envelope.source, envelope));
  const std::size_t moved = message.deliver(buffer, static_cast<std::size_t>(count), type);
  message.release();
  set_received_status(status, envelope, static_cast<std::size_t>(count) * type.size(), moved);
}

}  // namespace

void Engine::discard_unreceived() {
  while (weft_mpi_message* message = unexpected_.front()) {
    unexpected_.remove(message);
    // A local rendezvous message is its sender's request, which went away with its rank.
    if (message->ops != &kRendezvousOps) message->release();
  }
}

void Engine::collective_kinds_differ(const Request& recv, int sender) {
  const bool nonblocking = (recv.tag & kNonblockingCollectiveTag) != 0;
  const int call = call_of_tag(recv.tag);
  end_job("collective calls out of order: rank " + std::to_string(recv.owner) +
          "'s collective call #" + std::to_string(call) + " on a communicator is " +
          (nonblocking ? "a nonblocking collective" : "a blocking collective") +
          " where the member of comm rank " + std::to_string(sender) +
          ", in another process, made " + (nonblocking ? "a blocking one" : "a nonblocking one") +
          ", expected every member to call the same collectives in the same order (MPI-3.1 "
          "5.12: a nonblocking collective matches only the same nonblocking collective)");
}

void Engine::enqueue(weft_mpi_message* message) {
  unexpected_.push_back(message);
  bump(unexpected_length_, 1);
  message->queued = true;
  for (Prober* prober = probers_.front(); prober != nullptr;) {
    Prober* next = prober->next;
    if (prober->pattern.matches(message->envelope)) {
      probers_.remove(prober);
      prober->parker->notify();
    }
    prober = next;
  }
}

weft_mpi_message* Engine::take_match(const Pattern& pattern) {
  weft_mpi_message* message =
      unexpected_.find([&](const weft_mpi_message& m) { return pattern.matches(m.envelope); });
  if (message != nullptr) {
    unexpected_.remove(message);
    message->queued = false;
    bump(unexpected_length_, -1);
  }
  return message;
}

void Engine::take_slot(const Envelope& envelope) {
  // The slot is this arrival's until it completes slot_done_: no one else touches it.
  slot_state_.store(SlotState::taken, std::memory_order_relaxed);
  slot_source_ = envelope.source;
  slot_tag_ = envelope.tag;
  slot_bytes_ = envelope.bytes;
  // No stamp unless the sender writes one (Engine::send), or the message's data covers it.
  std::memset(slot_inline_ + kSlotStampAt, 0, sizeof(std::uint64_t));
}

void Engine::fill_slot(const void* data, std::size_t count, const Datatype& type) {
  // What fits is written while the lock keeps the line here, so the receiver fetches it once.
  if (slot_bytes_ <= kSlotInlineBytes) {
    if (slot_bytes_ > 0 && type.contiguous()) {
      // A few bytes of a contiguous type: a memcpy, not the datatype engine's general copy
      // (several times the instructions of the whole move).
      std::memcpy(slot_inline_, static_cast<const char*>(data) + type.true_lb(), slot_bytes_);
    } else if (slot_bytes_ > 0) {
      pack(data, count, type, slot_inline_);
    }
    lock_.unlock();
  } else {
    lock_.unlock();
    copy(slot_copy_, data, count, type, slot_buffer_, static_cast<std::size_t>(slot_count_),
         *slot_datatype_);
  }
  slot_done_.complete();
}

template <class ToSlot, class ToReceive, class ToQueue>
void Engine::route(const Envelope& envelope, ToSlot&& to_slot, ToReceive&& to_receive,
                   ToQueue&& to_queue) {
  lock_.lock();
  bump(arrived_, 1);
  // The slot's receive was posted before anything in posted_.
  if (slot_state_.load(std::memory_order_relaxed) == SlotState::posted &&
      slot_pattern_.matches(envelope)) {
    take_slot(envelope);
    to_slot();
    return;
  }
  Request* recv = posted_.find([&](const Request& r) { return r.matches(envelope); });
  if (recv != nullptr) {
    posted_.remove(recv);
    recv->posted = false;
    lock_.unlock();
    to_receive(*recv);
    return;
  }
  if (is_collective_call_tag(envelope.context, envelope.tag)) {
    const int other_kind = envelope.tag ^ kNonblockingCollectiveTag;
    if (const Request* waiting = posted_.find([&](const Request& r) {
          return r.context == envelope.context && r.peer == envelope.source && r.tag == other_kind;
        })) {
      collective_kinds_differ(*waiting, envelope.source);
    }
  }
  to_queue();
}

void Engine::send(Request& send, const Envelope& envelope, std::size_t eager_limit,
                  std::uint64_t* queued_key) {
  const std::size_t count = static_cast<std::size_t>(send.count);
  auto sent = [&send] {
    send.status.MPI_ERROR = MPI_SUCCESS;
    finish(send);
  };
  route(
      envelope,
      [&] {
        std::uint64_t stamp = 0;
        if (trace::enabled()) [[unlikely]] {
          stamp = trace::message_stamp();
          if (slot_has_stamp(envelope.bytes))
            std::memcpy(slot_inline_ + kSlotStampAt, &stamp, sizeof stamp);
        }
        fill_slot(send.buffer, count, *send.datatype);
        // Recorded once the receiver can go on: off the critical path of a ping-pong (the
        // record reads no clock: it takes the stamp's time).
        if (trace::enabled(trace::Category::message)) [[unlikely]]
          trace::message_delivered(message_info(send.peer, envelope), envelope.source, stamp);
        sent();
      },
      [&](Request& recv) {
        const std::size_t moved =
            envelope.bytes == 0
                ? 0
                : copy(recv.shared_copy, send.buffer, count, *send.datatype, recv.buffer,
                       static_cast<std::size_t>(recv.count), *recv.datatype);
        set_received_status(recv, envelope, moved);
        // The receive's end is read once it sees the completion, so after this.
        const std::uint64_t stamp = trace::enabled() ? trace::message_stamp() : 0;
        finish(recv);
        // After the receive's completion, like the slot's (above); recv may be gone by now.
        if (trace::enabled(trace::Category::message)) [[unlikely]]
          trace::message_delivered(message_info(send.peer, envelope), envelope.source, stamp);
        sent();
      },
      [&] {
        const bool eager = (send.mode == SendMode::standard || send.mode == SendMode::ready) &&
                           envelope.bytes <= eager_limit;
        if (eager) {
          weft_mpi_message* copy = eager_.make(envelope, send.buffer, count, *send.datatype);
          copy->sender_key = ++eager_keys_;
          if (queued_key != nullptr) *queued_key = copy->sender_key;
          if (trace::enabled(trace::Category::message)) [[unlikely]]
            trace::message_sent(flow_id(copy, copy->sender_key), message_info(send.peer, envelope));
          enqueue(copy);
          lock_.unlock();
          sent();
          return;
        }
        send.rendezvous.envelope = envelope;
        send.rendezvous.ops = &kRendezvousOps;
        send.rendezvous.request = &send;
        send.rendezvous.sender_key = ++eager_keys_;
        if (queued_key != nullptr) *queued_key = send.rendezvous.sender_key;
        if (trace::enabled(trace::Category::message)) [[unlikely]]
          trace::message_sent(flow_id(&send.rendezvous, send.rendezvous.sender_key),
                              message_info(send.peer, envelope));
        enqueue(&send.rendezvous);
        lock_.unlock();
      });
}

void Engine::arrive_eager(const Envelope& envelope, const void* data, std::uint64_t key) {
  route(
      envelope,
      [&] {
        if (trace::enabled(trace::Category::message)) [[unlikely]]
          trace::message_arrived(flow_id(nullptr, key), message_info(envelope.source, envelope));
        fill_slot(data, envelope.bytes, weft_mpi_byte);
      },
      [&](Request& recv) {
        const std::size_t moved = envelope.bytes == 0
                                      ? 0
                                      : copy(data, envelope.bytes, weft_mpi_byte, recv.buffer,
                                             static_cast<std::size_t>(recv.count), *recv.datatype);
        set_received_status(recv, envelope, moved);
        if (trace::enabled(trace::Category::message)) [[unlikely]]
          trace::message_arrived(flow_id(nullptr, key), message_info(envelope.source, envelope));
        finish(recv);
      },
      [&] {
        weft_mpi_message* copy = eager_.make(envelope, data, envelope.bytes, weft_mpi_byte);
        copy->sender_key = key;
        enqueue(copy);
        lock_.unlock();
      });
}

void Engine::arrive(weft_mpi_message& message) {
  const Envelope envelope = message.envelope;
  const std::uint64_t key = message.sender_key;
  auto traced = [&] {
    if (trace::enabled(trace::Category::message)) [[unlikely]]
      trace::message_arrived(flow_id(nullptr, key), message_info(envelope.source, envelope));
  };
  route(
      envelope,
      [&] {
        lock_.unlock();
        traced();
        // A message that fits the line is read from it, like a local one.
        const bool inline_data = envelope.bytes <= kSlotInlineBytes;
        message.ops->deliver_later(
            message, inline_data ? static_cast<void*>(slot_inline_) : slot_buffer_,
            inline_data ? envelope.bytes : static_cast<std::size_t>(slot_count_),
            inline_data ? weft_mpi_byte : *slot_datatype_, [this, &message](std::size_t) {
              message.release();
              slot_done_.complete();
            });
      },
      [&](Request& recv) {
        traced();
        message.ops->deliver_later(message, recv.buffer, static_cast<std::size_t>(recv.count),
                                   *recv.datatype, [&message, &recv, envelope](std::size_t moved) {
                                     message.release();
                                     set_received_status(recv, envelope, moved);
                                     finish(recv);
                                   });
      },
      [&] {
        enqueue(&message);
        lock_.unlock();
      });
}

void Engine::post(Request& recv) {
  lock_.lock();
  weft_mpi_message* message = take_match(Pattern{recv.context, recv.peer, recv.tag});
  if (message == nullptr && is_collective_call_tag(recv.context, recv.tag)) {
    const int other_kind = recv.tag ^ kNonblockingCollectiveTag;
    if (unexpected_.find([&](const weft_mpi_message& m) {
          return m.envelope.context == recv.context && m.envelope.source == recv.peer &&
                 m.envelope.tag == other_kind;
        }) != nullptr) {
      collective_kinds_differ(recv, recv.peer);
    }
  }
  if (message == nullptr) {
    posted_.push_back(&recv);
    recv.posted = true;
    lock_.unlock();
    return;
  }
  lock_.unlock();
  receive(recv, *message);
}

void Engine::receive_blocking(Request& recv, SpinBudget& budget) {
  const Pattern pattern{recv.context, recv.peer, recv.tag};
  lock_.lock();
  if (weft_mpi_message* message = take_match(pattern)) {
    lock_.unlock();
    receive(recv, *message);
    return;
  }
  // acquire: pairs with the release that freed the slot (its results were read before).
  if (slot_state_.load(std::memory_order_acquire) != SlotState::free || !posted_.empty()) {
    posted_.push_back(&recv);
    recv.posted = true;
    lock_.unlock();
    wait(recv, budget);
    return;
  }
  receive_in_slot(pattern, recv.buffer, recv.count, recv.datatype, recv.status, budget);
}

bool Engine::receive_now(const Pattern& pattern, void* buffer, int count, MPI_Datatype datatype,
                         MPI_Status& status, SpinBudget& budget) {
  lock_.lock();
  if (weft_mpi_message* message = take_match(pattern)) {
    lock_.unlock();
    deliver_to(*message, buffer, count, *datatype, status);
    return true;
  }
  // A receive posted before this one must match first: the general path queues behind it.
  // acquire: pairs with the release that freed the slot (its results were read before).
  if (!posted_.empty() || slot_state_.load(std::memory_order_acquire) != SlotState::free) {
    lock_.unlock();
    return false;
  }
  receive_in_slot(pattern, buffer, count, datatype, status, budget);
  return true;
}

void Engine::receive_in_slot(const Pattern& pattern, void* buffer, int count, MPI_Datatype datatype,
                             MPI_Status& status, SpinBudget& budget) {
  slot_state_.store(SlotState::posted, std::memory_order_relaxed);
  slot_pattern_ = pattern;
  slot_count_ = count;
  slot_buffer_ = buffer;
  slot_datatype_ = datatype;
  slot_done_.reset();
  lock_.unlock();
  slot_copy_.wait(slot_done_, budget);
  const Envelope envelope{pattern.context, slot_source_, slot_tag_, slot_bytes_};
  const std::size_t capacity = static_cast<std::size_t>(count) * datatype->size();
  if (envelope.bytes > 0 && envelope.bytes <= kSlotInlineBytes) {
    if (datatype->contiguous()) {
      std::memcpy(static_cast<char*>(buffer) + datatype->true_lb(), slot_inline_,
                  std::min(envelope.bytes, capacity));
    } else {
      copy(slot_inline_, envelope.bytes, weft_mpi_byte, buffer, static_cast<std::size_t>(count),
           *datatype);
    }
  }
  set_received_status(status, envelope, capacity, std::min(envelope.bytes, capacity));
  if (trace::enabled()) [[unlikely]] {
    std::uint64_t stamp = 0;
    if (slot_has_stamp(envelope.bytes))
      std::memcpy(&stamp, slot_inline_ + kSlotStampAt, sizeof stamp);
    trace::received_after(stamp);
  }
  // release: the results above are read before another receive may reuse the slot.
  slot_state_.store(SlotState::free, std::memory_order_release);
}

void Engine::receive(Request& recv, weft_mpi_message& message) {
  deliver_to(message, recv.buffer, recv.count, *recv.datatype, recv.status);
  finish(recv);
}

bool Engine::cancel_recv(Request& recv) {
  {
    std::lock_guard lock(lock_);
    if (!recv.posted) return false;
    posted_.remove(&recv);
    recv.posted = false;
  }
  recv.status.weft_cancelled = 1;
  recv.status.MPI_ERROR = MPI_SUCCESS;
  finish(recv);
  return true;
}

bool Engine::cancel_send(Request& send) {
  std::lock_guard lock(lock_);
  if (!send.rendezvous.queued) return false;
  unexpected_.remove(&send.rendezvous);
  send.rendezvous.queued = false;
  bump(unexpected_length_, -1);
  return true;
}

weft_mpi_message* Engine::withdraw(std::uint64_t key) {
  std::lock_guard lock(lock_);
  weft_mpi_message* message =
      unexpected_.find([key](const weft_mpi_message& m) { return m.sender_key == key; });
  if (message == nullptr) return nullptr;
  unexpected_.remove(message);
  message->queued = false;
  bump(unexpected_length_, -1);
  return message;
}

weft_mpi_message* Engine::find(const Pattern& pattern, bool take, Envelope* found) {
  std::lock_guard lock(lock_);
  weft_mpi_message* message =
      take ? take_match(pattern) : unexpected_.find([&](const weft_mpi_message& m) {
        return pattern.matches(m.envelope);
      });
  if (message != nullptr) *found = message->envelope;
  return message;
}

weft_mpi_message* Engine::wait_for(const Pattern& pattern, bool take, Envelope* found,
                                   SpinBudget& budget) {
  weft_mpi_message* message = nullptr;
  if (budget.spin_until([&] { return (message = find(pattern, take, found)) != nullptr; })) {
    return message;
  }
  for (;;) {
    Parker parker;
    Prober prober{pattern, &parker};
    lock_.lock();
    message = take ? take_match(pattern) : unexpected_.find([&](const weft_mpi_message& m) {
      return pattern.matches(m.envelope);
    });
    if (message != nullptr) {
      *found = message->envelope;
      lock_.unlock();
      return message;
    }
    probers_.push_back(&prober);
    lock_.unlock();
    // The arrival that wakes us unlinks us; another thread of the rank may take the message
    // first (MPI_THREAD_MULTIPLE), hence the loop.
    parker.drain(1);
  }
}

std::vector<Envelope> Engine::unexpected_envelopes() {
  std::vector<Envelope> envelopes;
  lock_.lock();
  for (const weft_mpi_message* m = unexpected_.front(); m != nullptr; m = m->next) {
    envelopes.push_back(m->envelope);
  }
  lock_.unlock();
  return envelopes;
}

}  // namespace weft::mpi
