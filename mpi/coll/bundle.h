// Several members' blocks in one message between processes: the heads of a spanning collective
// send their group's data at once instead of one message per member pair. The message holds
// the blocks' sizes in bytes, then their data packed back to back, in the order given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/collective.h"
#include "mpi.h"

namespace weft::mpi::spanning {

class Bundle {
 public:
  // The bytes of a bundle of `blocks`.
  static std::vector<char> pack(const std::vector<collective::Block>& blocks);
  // What a bundle to be unpacked into `blocks` may take at most when it fits them.
  static std::size_t capacity(const std::vector<collective::Block>& blocks);

  // Reads a received bundle of `entries` blocks, of which `received` bytes arrived (fewer than
  // were sent when the receive truncated it: what arrived can still be unpacked).
  Bundle(const char* data, std::size_t received, std::size_t entries);
  // MPI_ERR_TRUNCATE unless the whole bundle arrived (a member's data overflowed what the
  // receiver made room for, or the message is no bundle of that many blocks), else MPI_SUCCESS.
  int check() const { return whole_ ? MPI_SUCCESS : MPI_ERR_TRUNCATE; }
  // Unpacks what arrived of the next block into `to`, as much as fits: MPI_ERR_TRUNCATE when
  // that is not the whole block (it did not fit, or did not arrive), or when every block was
  // unpacked already; else MPI_SUCCESS.
  int unpack_next(const collective::Block& to);

 private:
  const char* data_;
  std::size_t received_;
  std::size_t entries_;  // 0 when not even the sizes arrived
  std::size_t next_ = 0;
  std::size_t offset_;  // of the next block's data
  bool whole_ = false;
};

}  // namespace weft::mpi::spanning
