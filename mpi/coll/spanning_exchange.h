// The point-to-point side of one collective call between processes: its receives and sends,
// posted together in the communicator's collective context under the call's tag, then waited
// for together. Members of one process exchange through the matching engine's single copy,
// members of others through the transport.
#pragma once

#include <cstddef>
#include <deque>

#include "coll/collective.h"
#include "mpi.h"
#include "pt2pt/p2p.h"
#include "request/request.h"

namespace weft::mpi::spanning {

class Exchange {
 public:
  Exchange(MPI_Comm comm, int tag);
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange() { wait(); }

  int me() const { return caller_.comm_rank; }
  void send(int to, const void* buffer, std::size_t count, MPI_Datatype type) {
    post(RequestKind::send, to, buffer, count, type);
  }
  // Returns the receive's number, for received().
  std::size_t receive(int from, void* buffer, std::size_t count, MPI_Datatype type) {
    received_.push_back(0);
    post(RequestKind::recv, from, buffer, count, type);
    return received_.size() - 1;
  }
  void send(int to, const collective::Block& block) {
    send(to, block.address, block.count, const_cast<MPI_Datatype>(block.type));
  }
  std::size_t receive(int from, const collective::Block& block) {
    return receive(from, block.address, block.count, const_cast<MPI_Datatype>(block.type));
  }
  // Waits for everything posted; the first failure's class (a truncated receive, a send the
  // transport refused), else MPI_SUCCESS. The bytes each receive got stay known afterwards.
  int wait();
  // Bytes that receive number `receive` got; valid after wait().
  std::size_t received(std::size_t receive) const { return received_.at(receive); }

 private:
  void post(RequestKind kind, int peer, const void* buffer, std::size_t count, MPI_Datatype type);

  MPI_Comm comm_;
  int tag_;
  Caller caller_;
  struct Posted {
    Request request;
    std::size_t receive;  // its number, or kNotReceive
  };
  static constexpr std::size_t kNotReceive = ~std::size_t{0};
  std::deque<Posted> posted_;
  std::deque<std::size_t> received_;  // by receive number
  int failure_ = MPI_SUCCESS;
};

// A copy between two blocks of this process; MPI_ERR_TRUNCATE when the source does not fit.
inline int copy_block(const collective::Block& from, const collective::Block& to) {
  collective::transfer(from, to);
  return from.bytes() > to.bytes() ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

inline int first_failure(int a, int b) {
  return a != MPI_SUCCESS ? a : b;
}

}  // namespace weft::mpi::spanning
