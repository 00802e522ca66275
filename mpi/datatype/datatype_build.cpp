// Building derived datatypes: flattening the pieces into merged blocks and computing the bounds
// by the rules of MPI-3.1 4.1.6-4.1.7.
#include "datatype/datatype_build.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "datatype/datatype_handles.h"

namespace weft::mpi {
namespace {

using Layout = weft_mpi_datatype::Layout;

void append(std::vector<Block>& blocks, MPI_Aint offset, std::size_t length) {
  if (length == 0) return;
  if (!blocks.empty()) {
    Block& last = blocks.back();
    if (last.offset + static_cast<MPI_Aint>(last.length) == offset) {
      last.length += length;
      return;
    }
  }
  blocks.push_back({offset, length});
}

// The lowest lower and highest upper bound over `count` copies `step` bytes apart. Emptiness is
// its own flag: a type resized to a negative extent has its upper bound below its lower one.
struct Span {
  MPI_Aint low = std::numeric_limits<MPI_Aint>::max();
  MPI_Aint high = std::numeric_limits<MPI_Aint>::min();
  bool covered = false;
  bool empty() const { return !covered; }
  void cover(MPI_Aint first_low, MPI_Aint first_high, std::size_t count, MPI_Aint step) {
    const MPI_Aint last = static_cast<MPI_Aint>(count - 1) * step;
    low = std::min({low, first_low, first_low + last});
    high = std::max({high, first_high, first_high + last});
    covered = true;
  }
};

// The predefined type that every piece with data repeats (`of` picks basic or unit), and how many
// times one element holds it; null when they differ.
std::pair<const weft_mpi_datatype*, std::size_t> common(const std::vector<Piece>& pieces,
                                                        const weft_mpi_datatype* Layout::*of,
                                                        std::size_t Layout::*count_of) {
  const bool any_data = std::any_of(pieces.begin(), pieces.end(),
                                    [](const Piece& p) { return p.count * p.type->size() > 0; });
  const weft_mpi_datatype* found = nullptr;
  std::size_t total = 0;
  bool first = true;
  for (const Piece& piece : pieces) {
    if (any_data && piece.count * piece.type->size() == 0) continue;
    const Layout& old = *piece.type->layout;
    if (first) {
      found = old.*of;
      first = false;
    } else if (found != old.*of) {
      return {nullptr, 0};
    }
    total += piece.count * (old.*count_of);
  }
  return {found, found == nullptr ? 0 : total};
}

MPI_Datatype publish(Layout* layout, DerivedParts* parts) {
  parts->block_ends.resize(parts->blocks.size());
  std::size_t end = 0;
  for (std::size_t i = 0; i < parts->blocks.size(); ++i) {
    end += parts->blocks[i].length;
    parts->block_ends[i] = end;
  }
  layout->blocks = parts->blocks.data();
  layout->block_count = parts->blocks.size();
  layout->block_ends = parts->block_ends.data();
  layout->predefined = false;
  layout->code = TypeCode::none;
  layout->parts = parts;
  for (MPI_Datatype inner : parts->contents.types) inner->retain();
  return new_handle(layout);
}

Layout* blank_layout() {
  return new Layout{.blocks = nullptr,
                    .block_count = 0,
                    .block_ends = nullptr,
                    .repeat = 1,
                    .stride = 0,
                    .size = 0,
                    .lb = 0,
                    .extent = 0,
                    .true_lb = 0,
                    .true_extent = 0,
                    .alignment = 1,
                    .explicit_bounds = false,
                    .predefined = false,
                    .code = TypeCode::none,
                    .basic = nullptr,
                    .basic_count = 0,
                    .unit = nullptr,
                    .unit_count = 0,
                    .committed = {false},
                    .references = {1},
                    .name_lock = {},
                    .name = {},
                    .parts = nullptr};
}

}  // namespace

MPI_Datatype build(const std::vector<Piece>& pieces, Padding padding, Contents contents,
                   Repetition repetition) {
  auto* parts = new DerivedParts{{}, {}, std::move(contents)};
  Layout* layout = blank_layout();
  Span bounds;
  Span data;
  std::size_t period_size = 0;
  for (const Piece& piece : pieces) {
    const Layout& old = *piece.type->layout;
    if (piece.count == 0) continue;
    period_size += piece.count * old.size;
    // The padding rounds to the alignment of the C types in the type map (MPI-4.1 5.1.6's
    // epsilon): a piece without data adds none, even if its type was built from aligned ones.
    if (old.size > 0) layout->alignment = std::max(layout->alignment, old.alignment);
    layout->explicit_bounds = layout->explicit_bounds || old.explicit_bounds;
    // A type without data and without explicit bounds has an empty type map: no bounds either.
    if (old.size > 0 || old.explicit_bounds) {
      bounds.cover(piece.displacement + old.lb, piece.displacement + old.lb + old.extent,
                   piece.count, old.extent);
    }
    if (old.size == 0) continue;
    data.cover(piece.displacement + old.true_lb, piece.displacement + old.true_lb + old.true_extent,
               piece.count, old.extent);
    if (piece.type->contiguous()) {
      append(parts->blocks, piece.displacement + old.true_lb, piece.count * old.size);
      continue;
    }
    for (std::size_t k = 0; k < piece.count; ++k) {
      for (std::size_t r = 0; r < old.repeat; ++r) {
        const MPI_Aint base = piece.displacement + static_cast<MPI_Aint>(k) * old.extent +
                              static_cast<MPI_Aint>(r) * old.stride;
        for (std::size_t b = 0; b < old.block_count; ++b) {
          append(parts->blocks, base + old.blocks[b].offset, old.blocks[b].length);
        }
      }
    }
  }
  layout->repeat = std::max<std::size_t>(repetition.count, 1);
  layout->stride = repetition.stride;
  if (repetition.count == 0) {
    parts->blocks.clear();
    period_size = 0;
    // No copy of the old type, so none of the bounds it set either: the new type is empty.
    layout->explicit_bounds = false;
  } else if (repetition.count > 1) {
    if (!bounds.empty()) bounds.cover(bounds.low, bounds.high, repetition.count, repetition.stride);
    if (!data.empty()) data.cover(data.low, data.high, repetition.count, repetition.stride);
    // Periods that touch (a vector whose stride is its block) make one block.
    if (parts->blocks.size() == 1 &&
        static_cast<MPI_Aint>(parts->blocks.front().length) == repetition.stride) {
      parts->blocks.front().length *= repetition.count;
      layout->repeat = 1;
      layout->stride = 0;
    }
  }
  const std::size_t periods = repetition.count;
  layout->size = period_size * periods;
  if (!bounds.empty() && periods > 0) {
    layout->lb = bounds.low;
    layout->extent = bounds.high - bounds.low;
  }
  if (padding == Padding::alignment && !layout->explicit_bounds) {
    const auto align = static_cast<MPI_Aint>(layout->alignment);
    if (const MPI_Aint over = layout->extent % align; over != 0) layout->extent += align - over;
  }
  if (!data.empty() && periods > 0) {
    layout->true_lb = data.low;
    layout->true_extent = data.high - data.low;
  } else {
    layout->true_lb = layout->lb;
  }
  std::tie(layout->basic, layout->basic_count) =
      common(pieces, &Layout::basic, &Layout::basic_count);
  std::tie(layout->unit, layout->unit_count) = common(pieces, &Layout::unit, &Layout::unit_count);
  layout->basic_count *= periods;
  layout->unit_count *= periods;
  return publish(layout, parts);
}

MPI_Datatype build_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent) {
  return build_resized(old, lb, extent, Contents{MPI_COMBINER_RESIZED, {}, {lb, extent}, {old}});
}

MPI_Datatype build_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, Contents contents) {
  const Layout& from = *old->layout;
  auto* parts = new DerivedParts{
      std::vector<Block>(from.blocks, from.blocks + from.block_count), {}, std::move(contents)};
  Layout* layout = blank_layout();
  layout->repeat = from.repeat;
  layout->stride = from.stride;
  layout->size = from.size;
  layout->lb = lb;
  layout->extent = extent;
  layout->true_lb = from.true_lb;
  layout->true_extent = from.true_extent;
  layout->alignment = from.alignment;
  layout->explicit_bounds = true;
  layout->basic = from.basic;
  layout->basic_count = from.basic_count;
  layout->unit = from.unit;
  layout->unit_count = from.unit_count;
  return publish(layout, parts);
}

MPI_Datatype build_dup(MPI_Datatype old) {
  MPI_Datatype dup = build_resized(old, old->lb(), old->extent());
  Layout& layout = *dup->layout;
  layout.explicit_bounds = old->layout->explicit_bounds;
  layout.parts->contents.combiner = MPI_COMBINER_DUP;
  layout.parts->contents.addresses.clear();
  // MPI-3.1 4.1.10: the duplicate has the committed state of the old type.
  layout.committed.store(old->committed(), std::memory_order_relaxed);
  return dup;
}

}  // namespace weft::mpi
