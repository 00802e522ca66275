// The matching engine of one rank: every message sent to the rank, from any transport, is matched
// here against the rank's receives, so MPI_ANY_SOURCE sees every sender alike.
//
// Two queues under one lock per rank: receives posted before their message arrived, and
// messages that arrived before their receive (unexpected). Both are searched in arrival order,
// which gives MPI's non-overtaking rule per (sender, communicator, tag) for free. Data is never
// copied under the lock except the small packing of an eager message.
#pragma once

#include <cstddef>

#include "eager.h"
#include "intrusive_list.h"
#include "message.h"
#include "request.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

class Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // At the end of the job: empties the unexpected queue, giving back its eager messages.
  void discard_unreceived();

  // A send to this engine's rank, from any thread. With a matching posted receive the data is
  // copied straight across and both complete; else a standard or ready send of at most
  // `eager_limit` bytes leaves an eager copy and completes; else the send's own rendezvous
  // message is queued and the send completes when a receive has copied from its buffer.
  void send(Request& send, const Envelope& envelope, std::size_t eager_limit);

  // A receive of this engine's rank: takes the first matching unexpected message (and completes
  // the receive), or queues the receive.
  void post(Request& recv);

  // Cancels a receive still queued (true), or does nothing when it was matched (false).
  bool cancel_recv(Request& recv);
  // Withdraws a send's rendezvous message still unmatched (true; the send is not completed).
  bool cancel_send(Request& send);

  // The first unexpected message matching `pattern`, or nullptr; its envelope goes to *found.
  // With `take` the message leaves the queue and belongs to the caller (MPI_Mprobe): it is then
  // received with receive(). Without, the pointer only says that one was there.
  weft_mpi_message* find(const Pattern& pattern, bool take, Envelope* found);
  // The same, waiting (spin, then park) until one arrives.
  weft_mpi_message* wait_for(const Pattern& pattern, bool take, Envelope* found,
                             SpinBudget& budget);

  // Delivers a message taken from the queue into `recv` and completes it.
  static void receive(Request& recv, weft_mpi_message& message);

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
  weft_mpi_message* take_match(const Pattern& pattern);

  detail::SpinLock lock_;
  IntrusiveList<Request> posted_;
  IntrusiveList<weft_mpi_message> unexpected_;
  IntrusiveList<Prober> probers_;
  EagerPool eager_;
};

// Writes a receive's status for a delivered message.
void set_received_status(Request& recv, const Envelope& envelope, std::size_t moved);

}  // namespace weft::mpi
