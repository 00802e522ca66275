#include "coll/bundle.h"

#include <algorithm>
#include <cstring>

#include "datatype/datatype.h"

namespace weft::mpi::spanning {

namespace {

std::size_t header_bytes(std::size_t entries) {
  return entries * sizeof(std::uint64_t);
}

}  // namespace

std::vector<char> Bundle::pack(const std::vector<collective::Block>& blocks) {
  std::vector<char> out(capacity(blocks));
  char* data = out.data() + header_bytes(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const collective::Block& block = blocks[i];
    const std::uint64_t size = block.bytes();
    std::memcpy(out.data() + i * sizeof size, &size, sizeof size);
    if (size > 0) weft::mpi::pack(block.address, block.count, *block.type, data);
    data += size;
  }
  return out;
}

std::size_t Bundle::capacity(const std::vector<collective::Block>& blocks) {
  std::size_t bytes = header_bytes(blocks.size());
  for (const collective::Block& block : blocks) bytes += block.bytes();
  return bytes;
}

Bundle::Bundle(const char* data, std::size_t received, std::size_t entries)
    : data_(data), received_(received), entries_(entries), offset_(header_bytes(entries)) {
  if (received < offset_) {
    entries_ = 0;
    return;
  }
  // The sender's buffer came from a vector of char: copy the sizes out rather than assume they
  // are aligned where the receive put them.
  std::size_t total = offset_;
  for (std::size_t i = 0; i < entries; ++i) {
    std::uint64_t size = 0;
    std::memcpy(&size, data + i * sizeof size, sizeof size);
    total += size;
  }
  whole_ = total == received;
}

int Bundle::unpack_next(const collective::Block& to) {
  if (next_ >= entries_) return MPI_ERR_TRUNCATE;
  std::uint64_t size = 0;
  std::memcpy(&size, data_ + next_ * sizeof size, sizeof size);
  ++next_;
  const char* in = data_ + offset_;
  const std::size_t there =
      offset_ < received_ ? std::min<std::size_t>(size, received_ - offset_) : 0;
  offset_ += size;
  const std::size_t fits = std::min(there, to.bytes());
  if (fits > 0) unpack(in, fits, to.address, to.count, *to.type);
  return fits == size ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
}

}  // namespace weft::mpi::spanning
