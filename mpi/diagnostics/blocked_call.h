// The "blocked in" record of a rank's thread: the MPI call it waits in and its arguments. A
// blocking call sets it on the thread (this_thread::set_wait_note) for as long as it may park;
// the stack dump prints it and the deadlock report builds its wait-for graph from it.
//
// The record lives in the waiting call's frame and is read by another kernel thread only while
// the owner stays parked (the park word is read around the read, weft/thread_dump.h), so it holds
// plain values: a reader never follows a pointer the owner may have dropped meanwhile, except the
// communicator and requests, which stay valid while their caller is parked in the call.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mpi.h"
#include "weft/thread_dump.h"

namespace weft::mpi {

struct BlockedCall : WaitNoteName {
  enum class Kind : std::uint8_t {
    receive,     // MPI_Recv, Sendrecv's receive: `peer` is the source
    send,        // a blocking send waiting for its receive: `peer` is the destination
    probe,       // MPI_Probe, MPI_Mprobe
    collective,  // a blocking collective: call number `collective` on `comm`
    requests,    // MPI_Wait and its forms, on `count` requests at `requests`
  };
  Kind kind = Kind::receive;
  MPI_Comm comm = MPI_COMM_NULL;
  int peer = MPI_PROC_NULL;  // comm rank, or MPI_ANY_SOURCE
  int tag = 0;
  std::uint64_t collective = 0;
  const MPI_Request* requests = nullptr;
  int count = 0;
  // Whether a request waited on is generalized (completed by the program's own code). Decided
  // by the waiting thread when it makes the record: the monitor must not read the requests,
  // which the thread writes (MPI_REQUEST_NULL, the request's release) once it resumes.
  bool generalized = false;
};

// Whether the call can only end by another rank's MPI call: false when a request it waits on
// is completed by the program's own code (a generalized request).
bool provable(const BlockedCall& call);

// Sets the record on the calling thread for the scope's life, the previous one after. A plain
// store on the thread's own control block: a blocking call costs two. A wait that is not
// provable sets none: the monitor counts a parked rank without a record as not deadlocked, and
// so never reads the record off a stack the thread may be reusing by then.
class BlockedScope {
 public:
  explicit BlockedScope(const BlockedCall& call)
      : previous_(this_thread::set_wait_note(provable(call) ? &call : nullptr)) {}
  ~BlockedScope() { this_thread::set_wait_note(previous_); }
  BlockedScope(const BlockedScope&) = delete;
  BlockedScope& operator=(const BlockedScope&) = delete;

 private:
  const void* previous_;
};

// A record for a point-to-point call of the caller's rank.
BlockedCall blocked_in(BlockedCall::Kind kind, std::string_view function, MPI_Comm comm, int peer,
                       int tag);
// For MPI_Wait and its forms.
BlockedCall blocked_on_requests(std::string_view function, const MPI_Request* requests, int count);

// "MPI_Recv(source=1, tag=0, comm=MPI_COMM_WORLD)"; the requests of a wait each described.
// Only while the record's thread, of world rank `world_rank`, stays parked (its communicator and
// requests are alive).
std::string describe(const BlockedCall& call, int world_rank);
// The communicator's name as its member `world_rank` set it, else "communicator <context>".
std::string comm_name(MPI_Comm comm, int world_rank);


}  // namespace weft::mpi
