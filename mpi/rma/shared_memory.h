// Memory that every rank of a communicator addresses: the control block of each window and the
// memory of MPI_Win_allocate_shared (and of MPI_Win_allocate across processes). Inside one
// process it is one heap block that the ranks share and the last to let go frees; across the
// processes of a node it is a POSIX shared memory segment each rank maps, unlinked as soon as
// every rank has mapped it, so nothing outlives the job.
#pragma once

#include <cstddef>
#include <string>

#include "mpi.h"

namespace weft::mpi::rma {

class SharedMemory {
 public:
  SharedMemory() = default;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory() { release(); }

  // Collective over `comm`: `bytes` zeroed bytes, made by comm rank 0. Returns an empty string, or
  // why the memory could not be made (the same text on every rank).
  std::string create(MPI_Comm comm, std::size_t bytes);
  std::byte* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  // This rank lets go of the memory (every rank must have stopped using it).
  void release();

 private:
  struct HeapBlock;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  HeapBlock* heap_ = nullptr;  // inside one process
  std::size_t mapped_ = 0;     // across processes: the length of this rank's mapping
};

}  // namespace weft::mpi::rma
