// The MPI_Type_* constructors (MPI-3.1 4.1.2-4.1.7): each checks its arguments and lists the
// pieces of one element of the new type.
#include <string>
#include <vector>

#include "attr/datatype_attributes.h"
#include "datatype/datatype_build.h"
#include "datatype/datatype_checks.h"
#include "util/profiling.h"

namespace checks = weft::mpi::datatype_checks;
using weft::mpi::Contents;
using weft::mpi::Padding;
using weft::mpi::Piece;

namespace {

std::string entry(std::string_view array, int i) {
  return std::string(array) + "[" + std::to_string(i) + "]";
}

// What the block constructors share: count, the old type, the output handle.
int check_common(std::string_view function, int count, MPI_Datatype oldtype,
                 const MPI_Datatype* newtype) {
  if (int rc = checks::count(function, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::type(function, "oldtype", oldtype); rc != MPI_SUCCESS) return rc;
  return checks::pointer(function, "newtype", newtype);
}

int check_lengths(std::string_view function, int count, const int* lengths) {
  if (int rc = checks::pointer(function, "array_of_blocklengths", lengths, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  for (int i = 0; i < count; ++i) {
    if (int rc = checks::block_length(function, entry("array_of_blocklengths", i), lengths[i]);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  return MPI_SUCCESS;
}

// Strides and displacements counted in extents of the old type become bytes.
MPI_Aint in_bytes(MPI_Aint elements, MPI_Datatype oldtype) {
  return elements * oldtype->extent();
}

}  // namespace

extern "C" int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int rc = check_common("MPI_Type_contiguous", count, oldtype, newtype); rc != MPI_SUCCESS) {
    return rc;
  }
  // One old element repeated: a non-contiguous old type is stored once, not `count` times.
  *newtype = weft::mpi::build({{0, 1, oldtype}}, Padding::none,
                              Contents{MPI_COMBINER_CONTIGUOUS, {count}, {}, {oldtype}},
                              {static_cast<std::size_t>(count), oldtype->extent()});
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_contiguous);

extern "C" int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_vector";
  if (int rc = check_common(kFunction, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::block_length(kFunction, "blocklength", blocklength); rc != MPI_SUCCESS) {
    return rc;
  }
  *newtype =
      weft::mpi::build({{0, static_cast<std::size_t>(blocklength), oldtype}}, Padding::none,
                       Contents{MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {oldtype}},
                       {static_cast<std::size_t>(count), in_bytes(stride, oldtype)});
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_vector);

extern "C" int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                        MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_hvector";
  if (int rc = check_common(kFunction, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::block_length(kFunction, "blocklength", blocklength); rc != MPI_SUCCESS) {
    return rc;
  }
  *newtype =
      weft::mpi::build({{0, static_cast<std::size_t>(blocklength), oldtype}}, Padding::none,
                       Contents{MPI_COMBINER_HVECTOR, {count, blocklength}, {stride}, {oldtype}},
                       {static_cast<std::size_t>(count), stride});
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_hvector);

extern "C" int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                                 const int array_of_displacements[], MPI_Datatype oldtype,
                                 MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_indexed";
  if (int rc = check_common(kFunction, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_lengths(kFunction, count, array_of_blocklengths); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = checks::pointer(kFunction, "array_of_displacements", array_of_displacements, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<Piece> pieces;
  Contents contents{MPI_COMBINER_INDEXED, {count}, {}, {oldtype}};
  for (int i = 0; i < count; ++i) {
    pieces.push_back({in_bytes(array_of_displacements[i], oldtype),
                      static_cast<std::size_t>(array_of_blocklengths[i]), oldtype});
    contents.integers.push_back(array_of_blocklengths[i]);
  }
  contents.integers.insert(contents.integers.end(), array_of_displacements,
                           array_of_displacements + count);
  *newtype = weft::mpi::build(pieces, Padding::none, std::move(contents));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_indexed);

extern "C" int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                         const MPI_Aint array_of_displacements[],
                                         MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_hindexed";
  if (int rc = check_common(kFunction, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_lengths(kFunction, count, array_of_blocklengths); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = checks::pointer(kFunction, "array_of_displacements", array_of_displacements, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<Piece> pieces;
  Contents contents{MPI_COMBINER_HINDEXED, {count}, {}, {oldtype}};
  for (int i = 0; i < count; ++i) {
    pieces.push_back(
        {array_of_displacements[i], static_cast<std::size_t>(array_of_blocklengths[i]), oldtype});
    contents.integers.push_back(array_of_blocklengths[i]);
    contents.addresses.push_back(array_of_displacements[i]);
  }
  *newtype = weft::mpi::build(pieces, Padding::none, std::move(contents));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_hindexed);

extern "C" int PMPI_Type_create_indexed_block(int count, int blocklength,
                                              const int array_of_displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_indexed_block";
  if (int rc = check_common(kFunction, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::block_length(kFunction, "blocklength", blocklength); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = checks::pointer(kFunction, "array_of_displacements", array_of_displacements, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<Piece> pieces;
  Contents contents{MPI_COMBINER_INDEXED_BLOCK, {count, blocklength}, {}, {oldtype}};
  for (int i = 0; i < count; ++i) {
    pieces.push_back({in_bytes(array_of_displacements[i], oldtype),
                      static_cast<std::size_t>(blocklength), oldtype});
    contents.integers.push_back(array_of_displacements[i]);
  }
  *newtype = weft::mpi::build(pieces, Padding::none, std::move(contents));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_indexed_block);

extern "C" int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                               const MPI_Aint array_of_displacements[],
                                               MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_hindexed_block";
  if (int rc = check_common(kFunction, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::block_length(kFunction, "blocklength", blocklength); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = checks::pointer(kFunction, "array_of_displacements", array_of_displacements, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<Piece> pieces;
  Contents contents{MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength}, {}, {oldtype}};
  for (int i = 0; i < count; ++i) {
    pieces.push_back({array_of_displacements[i], static_cast<std::size_t>(blocklength), oldtype});
    contents.addresses.push_back(array_of_displacements[i]);
  }
  *newtype = weft::mpi::build(pieces, Padding::none, std::move(contents));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_hindexed_block);

extern "C" int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                       const MPI_Aint array_of_displacements[],
                                       const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_struct";
  if (int rc = checks::count(kFunction, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_lengths(kFunction, count, array_of_blocklengths); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = checks::pointer(kFunction, "array_of_displacements", array_of_displacements, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = checks::pointer(kFunction, "array_of_types", array_of_types, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  for (int i = 0; i < count; ++i) {
    if (int rc = checks::type(kFunction, entry("array_of_types", i), array_of_types[i]);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (int rc = checks::pointer(kFunction, "newtype", newtype); rc != MPI_SUCCESS) return rc;
  std::vector<Piece> pieces;
  Contents contents{MPI_COMBINER_STRUCT, {count}, {}, {}};
  for (int i = 0; i < count; ++i) {
    pieces.push_back({array_of_displacements[i], static_cast<std::size_t>(array_of_blocklengths[i]),
                      array_of_types[i]});
    contents.integers.push_back(array_of_blocklengths[i]);
    contents.addresses.push_back(array_of_displacements[i]);
    contents.types.push_back(array_of_types[i]);
  }
  *newtype = weft::mpi::build(pieces, Padding::alignment, std::move(contents));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_struct);

extern "C" int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                        MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_resized";
  if (int rc = checks::type(kFunction, "oldtype", oldtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "newtype", newtype); rc != MPI_SUCCESS) return rc;
  *newtype = weft::mpi::build_resized(oldtype, lb, extent);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_resized);

extern "C" int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_dup";
  if (int rc = checks::type(kFunction, "oldtype", oldtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "newtype", newtype); rc != MPI_SUCCESS) return rc;
  MPI_Datatype dup = weft::mpi::build_dup(oldtype);
  if (int rc = weft::mpi::copy_type_attributes(oldtype, dup, kFunction); rc != MPI_SUCCESS) {
    dup->release();
    // As MPICH answers (attr/attrerrtype frees what it gets unless it is the null handle).
    *newtype = MPI_DATATYPE_NULL;
    return rc;
  }
  *newtype = dup;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_dup);
