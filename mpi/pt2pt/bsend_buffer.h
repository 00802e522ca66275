// The buffer a rank attaches for MPI_Bsend (MPI_Buffer_attach). Each buffered message takes its
// packed size plus MPI_BSEND_OVERHEAD bytes of it, as MPI-3.1 3.6.1 tells users to budget, until
// its receiver has copied it out; MPI_Buffer_detach and MPI_Finalize wait for that.
#pragma once

#include <cstddef>
#include <map>
#include <utility>

#include "request/completion.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

class BsendBuffer {
 public:
  bool attached() const;
  // False when a buffer is already attached.
  bool attach(void* buffer, std::size_t size);
  // Waits until every message in the buffer has been received, then detaches it and returns
  // its address and size (nullptr, 0 when none was attached).
  std::pair<void*, std::size_t> detach();
  // Waits until every message in the buffer has been received.
  void drain();

  // Room for a message of `bytes` packed bytes, or nullptr when it does not fit now.
  void* reserve(std::size_t bytes);
  // By whichever thread finished the message's send.
  void release(void* block);

 private:
  mutable detail::SpinLock lock_;
  char* base_ = nullptr;
  std::size_t size_ = 0;
  std::map<std::size_t, std::size_t> free_;  // offset -> length, coalesced
  std::map<std::size_t, std::size_t> used_;  // offset -> length
  Parker* drainer_ = nullptr;                // waits for used_ to empty
};

}  // namespace weft::mpi
