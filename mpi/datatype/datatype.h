// Datatypes: the predefined ones and those built by the MPI_Type_* constructors. The other
// modules of mpi/ use the member functions and the copy functions below; the representation is
// datatype.cpp's business.
#pragma once

#include <cstddef>
#include <string_view>

#include "mpi.h"

struct weft_mpi_datatype {
  std::size_t size() const;  // bytes of data in one element (MPI_Type_size)
  MPI_Aint lb() const;
  MPI_Aint extent() const;  // distance between consecutive elements of a count
  MPI_Aint true_lb() const;
  MPI_Aint true_extent() const;
  bool committed() const;  // predefined types always are
  bool predefined() const;
  // One element's data is size() bytes in one block and consecutive elements touch
  // (extent() == size()): a count of them is one block of count * size() bytes at true_lb().
  bool contiguous() const;
  std::string_view name() const;  // "MPI_INT", or the MPI_Type_set_name one, or ""
  // The predefined type this one is a repetition of (nullptr when it mixes several), and how many
  // of them one element holds: what a reduction operates on.
  const weft_mpi_datatype* basic() const;
  std::size_t basic_count() const;
  // A pending operation keeps a derived type alive past MPI_Type_free.
  void retain();
  void release();

  // Representation: defined by datatype.cpp.
  struct Layout;
  Layout* layout;
};

namespace weft::mpi {

using Datatype = weft_mpi_datatype;

// Copies the typed data of `src_count` elements of `src_type` at `src` into `dst_count` elements
// of `dst_type` at `dst`, in type-map order, as one stream of bytes on each side; moves
// min(src_count * src size, dst_count * dst size) bytes and returns that number. Non-contiguous
// sides are walked block by block, never through an intermediate buffer.
std::size_t copy(const void* src, std::size_t src_count, const Datatype& src_type, void* dst,
                 std::size_t dst_count, const Datatype& dst_type);
// The same for bytes [offset, offset + bytes) of both streams only (chunked copies and copies
// shared among threads). Returns the bytes moved (less at the end of a stream).
std::size_t copy_range(const void* src, std::size_t src_count, const Datatype& src_type, void* dst,
                       std::size_t dst_count, const Datatype& dst_type, std::size_t offset,
                       std::size_t bytes);
// Packs `count` elements into `out` (count * size() bytes) and back.
void pack(const void* src, std::size_t count, const Datatype& type, void* out);
void unpack(const void* in, std::size_t bytes, void* dst, std::size_t count, const Datatype& type);

}  // namespace weft::mpi
