// Several members' blocks in one message between processes: the heads of a spanning collective
// send their group's data at once instead of one message per member pair. The message holds
// the blocks' sizes in bytes, then their data packed back to back, in the order given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collective.h"
#include "mpi.h"

namespace weft::mpi::spanning {

class Bundle {
 public:
  // The bytes of a bundle of `blocks`.
  static std::vector<char> pack(const std::vector<collective::Block>& blocks);
  // What a bundle to be unpacked into `blocks` may take at most when it fits them.
  static std::size_t capacity(const std::vector<collective::Block>& blocks);

  // Reads a received bundle of `entries` blocks, `received` bytes long.
  Bundle(const char* data, std::size_t received, std::size_t entries);
  // MPI_ERR_TRUNCATE when the message is not a bundle of that many blocks (a member's data
  // overflowed what the receiver made room for), else MPI_SUCCESS.
  int check() const { return valid_ ? MPI_SUCCESS : MPI_ERR_TRUNCATE; }
  // Unpacks the next block into `to`: MPI_ERR_TRUNCATE when it does not fit (nothing is
  // written then) or when every block was unpacked already, else MPI_SUCCESS. Requires check()
  // to succeed.
  int unpack_next(const collective::Block& to);

 private:
  const char* data_;
  std::size_t entries_;
  std::size_t next_ = 0;
  std::size_t offset_;  // of the next block's data
  bool valid_ = false;
};

}  // namespace weft::mpi::spanning
