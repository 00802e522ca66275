// A partitioned communication (MPI-4.1 4): one persistent MPI_Request on each side, its data
// cut into partitions that the sender marks ready one by one, possibly from many threads.
//
// Every send partition travels as one point-to-point message in a matching context of its own
// (allocate_context, unique in the job), tagged with its index, so that two channels between the
// same ranks never match each other's data and partitions may leave in any order. Inside a
// process the engine copies a partition straight from the send buffer into the receive buffer
// when the receive is posted (a rendezvous for large partitions, an eager copy for small ones);
// between processes the transport carries it. MPI_Pready starts the partition's send on the spot.
//
// The sender names the context: MPI_Psend_init sends a small setup message (the context, its
// partitioning) in the communicator's collective context, tag kSetupTag | tag, which the k-th
// matching MPI_Precv_init receives (the standard matches the init calls in order, as messages
// are). The receiver learns the layout when it arrives, so no call ever waits for the other side.
//
// A round (MPI_Start to completion) is watched by a helper thread of the rank, which waits for
// every partition's message and then completes the user's request: MPI_Test and MPI_Wait see an
// ordinary completion, and MPI_Parrived reads the completion of the messages of one partition.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "mpi.h"
#include "request/request.h"

namespace weft::mpi::part {

// In the collective context; collectives' tags never set bit 30 (kNonblockingCollectiveTag is
// bit 29 and user tags end at 2^30 - 1).
inline constexpr int kSetupTag = 1 << 30;

// What the sender tells the receiver, once per channel.
struct Setup {
  std::uint32_t context = 0;     // of the data messages
  std::int32_t partitions = 0;   // send partitions, one message each
  std::uint64_t unit_bytes = 0;  // typed data of one send partition
};

class Channel {
 public:
  struct Layout {
    void* buffer = nullptr;
    int partitions = 0;
    int count = 0;  // elements of datatype per partition
    MPI_Datatype datatype = MPI_DATATYPE_NULL;
    int peer = 0;
    int tag = 0;
    MPI_Comm comm = MPI_COMM_NULL;
  };

  // MPI_Psend_init / MPI_Precv_init: sends or posts the setup message.
  Channel(bool sender, const Layout& layout, const Caller& caller);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  bool sender() const { return sender_; }
  int partitions() const { return layout_.partitions; }
  MPI_Comm comm() const { return layout_.comm; }

  // MPI_Start of `request`, the channel's user request: begins a round.
  void start(Request& request, const std::shared_ptr<Channel>& self);
  // MPI_Pready of one partition, from any thread of the rank. MPI_SUCCESS or the class raised.
  int ready(int partition, std::string_view function);
  // MPI_Parrived on `request`, the channel's: the receive partition's data is in the buffer.
  bool arrived(const Request& request, int partition) const;
  // Between MPI_Start and the completion of its round.
  bool active() const { return active_.load(std::memory_order_acquire); }

 private:
  void watch_send(Request& request);
  void watch_recv(Request& request);
  // The receiver, once the setup has arrived: checks it against the receive and makes one
  // receive per send partition. MPI_SUCCESS or the class for the request's status.
  int plan_receives();
  std::unique_ptr<Request> make_unit(RequestKind kind, void* buffer, int count,
                                     MPI_Datatype datatype, int tag);

  const bool sender_;
  const Layout layout_;
  const Caller caller_;
  std::uint32_t context_ = 0;  // of the data messages
  Setup setup_;
  std::unique_ptr<Request> setup_request_;
  bool planned_ = false;  // the receiver's units exist; touched by the round's helper only
  std::uint64_t unit_bytes_ = 0;
  std::vector<std::unique_ptr<Request>> units_;  // one message per send partition

  // The sender's round: which partitions are ready (set by MPI_Pready, cleared by MPI_Start),
  // how many, and the event of the last one.
  std::vector<std::atomic<std::uint8_t>> ready_;
  std::atomic<int> ready_count_{0};
  Completion all_ready_;
  // The receiver's round: its units are posted (release: the units exist and are started).
  std::atomic<bool> posted_{false};
  std::atomic<bool> active_{false};
};

// What MPI_Start does with a partitioned request; its std::function holds the channel, which
// the partitioned calls find again through std::function::target.
struct Starter {
  std::shared_ptr<Channel> channel;
  void operator()(Request& request) { channel->start(request, channel); }
};

// The channel of a partitioned request, nullptr for any other request.
Channel* channel_of(MPI_Request request);

}  // namespace weft::mpi::part
