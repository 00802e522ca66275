// A file view (MPI-4.1 14.3): where a rank's data lies in the file. The filetype is flattened once,
// when the view is set, into the file blocks of one tile; every access then maps a range of the
// view's data stream onto file extents without walking the datatype again.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "datatype/datatype.h"
#include "mpi.h"

namespace weft::mpi::io {

// A run of bytes: in the file (offset) or in memory (address).
struct Extent {
  MPI_Offset offset;
  std::size_t length;
};

struct View {
  MPI_Offset disp = 0;
  MPI_Datatype etype = MPI_BYTE;
  MPI_Datatype filetype = MPI_BYTE;
  std::string datarep = "native";
  std::size_t etype_size = 1;
  // One tile of the filetype: its data blocks relative to the tile's start, in type-map order,
  // adjacent ones merged; the tile's extent and data size. Tile t starts at disp + t * extent.
  std::vector<Extent> blocks;
  std::vector<std::size_t> block_ends;  // data bytes of the tile up to the end of block i
  MPI_Offset extent = 1;
  std::size_t tile_size = 1;

  // The file extents of the view's data bytes [start, start + bytes), in stream order.
  void map(MPI_Offset start, std::size_t bytes, std::vector<Extent>& out) const;
  // The file offset of the view's data byte `position`.
  MPI_Offset byte_offset(MPI_Offset position) const;
  // Whether the file offsets of the data stream increase with it, tile after tile (the tile's
  // blocks in order, not overlapping, spanning at most its extent): position_of() then inverts
  // byte_offset(). Found by set(), once.
  bool monotonic = false;
  // How many of the view's data bytes lie before file offset `offset` (monotonic views only).
  MPI_Offset position_of(MPI_Offset offset) const;
};

// The data blocks of `count` elements of `type` laid out from offset 0, in type-map order,
// adjacent blocks merged (offsets may be negative for a type with a negative lower bound).
std::vector<Extent> flatten(MPI_Datatype type, std::size_t count);

// Why `type` cannot be an etype or filetype (a displacement that is negative or smaller than the
// one before it; with `writable`, blocks that overlap), or "" when it can.
std::string layout_problem(MPI_Datatype type, bool writable);

// Sets `view` to (disp, etype, filetype, datarep); the types were checked by the caller.
void set(View& view, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
         const std::string& datarep);

}  // namespace weft::mpi::io
