// The representation of a datatype, private to the datatype and reduction code of mpi/.
//
// One element of a type is a period, a list of blocks (offset from the buffer, length in bytes)
// in type-map order, adjacent blocks merged, empty ones dropped, repeated `repeat` times `stride`
// bytes apart; element i of a count lies extent() bytes after element i - 1. The repetition keeps
// a vector of a million columns at one block instead of a million. A copy walks these lists as
// byte streams (datatype.cpp).
//
// Predefined types are constant-initialised (their blocks are static arrays), so they are usable
// from any static constructor; derived types own their blocks and constructor arguments.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "datatype/datatype.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

struct Block {
  MPI_Aint offset;
  std::size_t length;
};

// The C type behind a predefined datatype: what a reduction kernel is instantiated for.
enum class TypeCode : std::uint8_t {
  none,  // a derived type
  char_,
  wchar,
  signed_char,
  unsigned_char,
  short_,
  unsigned_short,
  int_,
  unsigned_,
  long_,
  unsigned_long,
  long_long,
  unsigned_long_long,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  aint,
  count,
  offset,
  float_,
  double_,
  long_double,
  c_bool,
  cxx_bool,
  float_complex,
  double_complex,
  long_double_complex,
  byte,
  packed,
  float_int,
  double_int,
  long_int,
  two_int,
  short_int,
  long_double_int,
  two_float,         // Fortran's MPI_2REAL
  two_double,        // MPI_2DOUBLE_PRECISION
  float128,          // Fortran's REAL(16): IEEE quadruple precision, not x87's long double
  float128_complex,  // COMPLEX(16)
  int128,            // Fortran's INTEGER(16) (gfortran's integer(kind=16))
  character,         // Fortran CHARACTER: not reducible
  logical,           // Fortran LOGICAL, an int: the logical operations only
};

struct ObjectName {
  char text[MPI_MAX_OBJECT_NAME]{};
};

constexpr ObjectName object_name(std::string_view text) {
  ObjectName name{};
  for (std::size_t i = 0; i < text.size() && i + 1 < sizeof(name.text); ++i) name.text[i] = text[i];
  return name;
}

// A constructor's arguments, as MPI_Type_get_contents returns them. The derived types among
// them are retained while the type built from them lives.
struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> integers;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;
  // The counts and displacements a large-count constructor (_c, MPI-4.1 5.1.13) took as
  // MPI_Count, in argument order; empty for the classic forms.
  std::vector<MPI_Count> large_counts{};
};

// What a derived type owns: its blocks and the arguments of the constructor that built it.
struct DerivedParts {
  std::vector<Block> blocks;
  std::vector<std::size_t> block_ends;
  Contents contents;
};

// The constructor's arguments of a derived type; MPI_COMBINER_NAMED's empty ones for a
// predefined type (datatype_contents.cpp).
const Contents& contents_of(MPI_Datatype datatype);

}  // namespace weft::mpi

struct weft_mpi_datatype::Layout {
  const weft::mpi::Block* blocks;  // one period
  std::size_t block_count;
  // block_ends[i]: stream bytes of one period up to the end of block i (finds a byte's block).
  const std::size_t* block_ends;
  std::size_t repeat;  // periods per element, >= 1
  MPI_Aint stride;     // bytes from one period to the next
  std::size_t size;
  MPI_Aint lb;
  MPI_Aint extent;
  MPI_Aint true_lb;
  MPI_Aint true_extent;
  std::size_t alignment;  // the largest alignment of the C types inside (struct extent padding)
  // Bounds set by MPI_Type_create_resized somewhere inside: MPI_Type_create_struct then keeps
  // them as they are instead of padding the extent to the alignment (as MPICH does).
  bool explicit_bounds;
  bool predefined;
  weft::mpi::TypeCode code;  // none for derived types
  // The predefined type repeated basic_count times (pairs excluded: they mix two C types).
  const weft_mpi_datatype* basic;
  std::size_t basic_count;
  // The same with pair types as units: what MPI_MAXLOC and MPI_MINLOC operate on.
  const weft_mpi_datatype* unit;
  std::size_t unit_count;
  // Set once by MPI_Type_commit; relaxed readers see it in the thread that committed, and other
  // ranks only see the handle through a message or a shared variable that orders it.
  std::atomic<bool> committed;
  // One for the handle the constructor returned, one per pending operation and per type built
  // on it; the object is deleted when the last goes.
  std::atomic<int> references;
  weft::detail::SpinLock name_lock;
  weft::mpi::ObjectName name;
  // Owned (deleted with the type); null for predefined types. A raw pointer keeps the layout a
  // literal type, so that the predefined ones are constant-initialised.
  weft::mpi::DerivedParts* parts;
};
