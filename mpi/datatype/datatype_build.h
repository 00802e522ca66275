// Building derived datatypes: what every MPI_Type_* constructor reduces to.
#pragma once

#include <cstddef>
#include <vector>

#include "datatype/datatype_layout.h"

namespace weft::mpi {

// `count` consecutive elements of `type` (extent() apart) starting `displacement` bytes into the
// new element. A constructor is a list of pieces in type-map order.
struct Piece {
  MPI_Aint displacement;
  std::size_t count;
  MPI_Datatype type;
};

// MPI_Type_create_struct pads the extent to the alignment of its C types (MPI-3.1 4.1.6's
// epsilon), unless bounds were set explicitly inside; the other constructors never pad.
enum class Padding { none, alignment };

// The pieces of a constructor describe one period of the element, repeated `count` times
// `stride` bytes apart (a vector's blocks: one piece, `count` periods).
struct Repetition {
  std::size_t count = 1;
  MPI_Aint stride = 0;
};

// A new derived type: one reference, not committed, nameless. The derived types of `contents`
// are retained until it is deleted.
MPI_Datatype build(const std::vector<Piece>& pieces, Padding padding, Contents contents,
                   Repetition repetition = {});
MPI_Datatype build_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent);
// The same type map and bounds under other constructor arguments: what MPI_Type_create_subarray
// and _darray return, built from simpler types, carrying their own contents.
MPI_Datatype build_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, Contents contents);
MPI_Datatype build_dup(MPI_Datatype old);

}  // namespace weft::mpi
