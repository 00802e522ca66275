#include "io/view.h"

#include <algorithm>

#include "datatype/datatype_layout.h"

namespace weft::mpi::io {

std::vector<Extent> flatten(MPI_Datatype type, std::size_t count) {
  std::vector<Extent> out;
  const weft_mpi_datatype::Layout& layout = *type->layout;
  if (type->size() == 0 || count == 0) return out;
  if (type->contiguous()) {  // one block, however many elements: no walk
    out.push_back({type->true_lb(), count * type->size()});
    return out;
  }
  for (std::size_t element = 0; element < count; ++element) {
    const MPI_Aint base = static_cast<MPI_Aint>(element) * layout.extent;
    for (std::size_t period = 0; period < layout.repeat; ++period) {
      const MPI_Aint start = base + static_cast<MPI_Aint>(period) * layout.stride;
      for (std::size_t b = 0; b < layout.block_count; ++b) {
        const Block& block = layout.blocks[b];
        const MPI_Offset offset = start + block.offset;
        if (!out.empty() &&
            out.back().offset + static_cast<MPI_Offset>(out.back().length) == offset) {
          out.back().length += block.length;
        } else {
          out.push_back({offset, block.length});
        }
      }
    }
  }
  return out;
}

std::string layout_problem(MPI_Datatype type, bool writable) {
  const std::vector<Extent> blocks = flatten(type, 1);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].offset < 0) {
      return "places data at a negative displacement (" + std::to_string(blocks[i].offset) + ")";
    }
    if (i == 0) continue;
    const Extent& before = blocks[i - 1];
    if (blocks[i].offset < before.offset) {
      return "has decreasing displacements (" + std::to_string(blocks[i].offset) + " after " +
             std::to_string(before.offset) + ")";
    }
    if (writable && blocks[i].offset < before.offset + static_cast<MPI_Offset>(before.length)) {
      return "has overlapping blocks (at " + std::to_string(blocks[i].offset) +
             "), which a file opened for writing cannot have";
    }
  }
  return "";
}

namespace {

bool monotonic(const View& view) {
  const std::vector<Extent>& blocks = view.blocks;
  if (view.tile_size == 0 || blocks.empty() || view.extent <= 0) return false;
  for (std::size_t b = 1; b < blocks.size(); ++b) {
    if (blocks[b].offset < blocks[b - 1].offset + static_cast<MPI_Offset>(blocks[b - 1].length)) {
      return false;
    }
  }
  const Extent& last = blocks.back();
  return last.offset + static_cast<MPI_Offset>(last.length) - blocks.front().offset <= view.extent;
}

}  // namespace

void set(View& view, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
         const std::string& datarep) {
  // The view keeps its types alive past MPI_Type_free (they are read at every access).
  if (!etype->predefined()) etype->retain();
  if (!filetype->predefined()) filetype->retain();
  if (!view.etype->predefined()) view.etype->release();
  if (!view.filetype->predefined()) view.filetype->release();
  view.disp = disp;
  view.etype = etype;
  view.filetype = filetype;
  view.datarep = datarep;
  view.etype_size = etype->size();
  view.blocks = flatten(filetype, 1);
  view.block_ends.clear();
  std::size_t end = 0;
  for (const Extent& block : view.blocks) {
    end += block.length;
    view.block_ends.push_back(end);
  }
  view.extent = filetype->extent();
  view.tile_size = filetype->size();
  view.monotonic = monotonic(view);
}

void View::map(MPI_Offset start, std::size_t bytes, std::vector<Extent>& out) const {
  if (bytes == 0) return;
  auto tile = static_cast<MPI_Offset>(static_cast<std::size_t>(start) / tile_size);
  std::size_t within = static_cast<std::size_t>(start) % tile_size;
  auto block = static_cast<std::size_t>(
      std::upper_bound(block_ends.begin(), block_ends.end(), within) - block_ends.begin());
  // At most one extent a block of each tile the range touches (none of a byte), unless the tiles
  // are dense and the range is one extent.
  const bool dense = blocks.size() == 1 && static_cast<MPI_Offset>(blocks[0].length) == extent;
  if (!dense) out.reserve(out.size() + std::min(bytes, (bytes / tile_size + 2) * blocks.size()));
  while (bytes > 0) {
    const std::size_t block_start = block_ends[block] - blocks[block].length;
    const std::size_t skip = within - block_start;
    const std::size_t take = std::min(bytes, blocks[block].length - skip);
    const MPI_Offset offset =
        disp + tile * extent + blocks[block].offset + static_cast<MPI_Offset>(skip);
    if (!out.empty() && out.back().offset + static_cast<MPI_Offset>(out.back().length) == offset) {
      out.back().length += take;
    } else {
      out.push_back({offset, take});
    }
    bytes -= take;
    within += take;
    if (++block == blocks.size()) {
      block = 0;
      within = 0;
      ++tile;
    }
  }
}

MPI_Offset View::byte_offset(MPI_Offset position) const {
  if (tile_size == 0) return disp;
  const auto tile = static_cast<MPI_Offset>(static_cast<std::size_t>(position) / tile_size);
  const std::size_t within = static_cast<std::size_t>(position) % tile_size;
  const auto block = static_cast<std::size_t>(
      std::upper_bound(block_ends.begin(), block_ends.end(), within) - block_ends.begin());
  const std::size_t block_start = block_ends[block] - blocks[block].length;
  return disp + tile * extent + blocks[block].offset +
         static_cast<MPI_Offset>(within - block_start);
}

MPI_Offset View::position_of(MPI_Offset offset) const {
  // Tile t holds its data in [disp + t * extent + first, disp + t * extent + first + extent).
  const MPI_Offset first = blocks.front().offset;
  const MPI_Offset from = offset - disp - first;
  if (from <= 0) return 0;
  const MPI_Offset tile = from / extent;
  const MPI_Offset within = from % extent + first;  // relative to the tile's start, as blocks
  // The first block that starts at or after `within`; the one before may hold `within`.
  const auto block = static_cast<std::size_t>(
      std::partition_point(blocks.begin(), blocks.end(),
                           [&](const Extent& b) { return b.offset < within; }) -
      blocks.begin());
  std::size_t before = 0;
  if (block > 0) {
    const Extent& previous = blocks[block - 1];
    const MPI_Offset past = previous.offset + static_cast<MPI_Offset>(previous.length) - within;
    before = block_ends[block - 1] - static_cast<std::size_t>(std::max<MPI_Offset>(0, past));
  }
  return tile * static_cast<MPI_Offset>(tile_size) + static_cast<MPI_Offset>(before);
}

}  // namespace weft::mpi::io
