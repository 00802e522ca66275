// The MPI_Type_* constructors (MPI-4.1 5.1.2-5.1.7) in both their forms: each checks its
// arguments and lists the pieces of one element of the new type. The classic form takes int
// counts and MPI_Aint byte displacements, kept as the type's integers and addresses; the
// large-count form (_c) takes MPI_Count for both, kept as its large counts (MPI-4.1 5.1.13), and
// builds types past 2^31 elements or bytes.
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

std::string entry(std::string_view array, long long i) {
  return std::string(array) + "[" + std::to_string(i) + "]";
}

void keep_count(Contents& contents, int value) {
  contents.integers.push_back(value);
}
void keep_count(Contents& contents, MPI_Count value) {
  contents.large_counts.push_back(value);
}
void keep_bytes(Contents& contents, MPI_Aint value) {
  contents.addresses.push_back(value);
}
void keep_bytes(Contents& contents, MPI_Count value) {
  contents.large_counts.push_back(value);
}

// What the block constructors share: count, the old type, the output handle.
int check_common(std::string_view function, long long count, MPI_Datatype oldtype,
                 const MPI_Datatype* newtype) {
  if (int rc = checks::count(function, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::type(function, "oldtype", oldtype); rc != MPI_SUCCESS) return rc;
  return checks::pointer(function, "newtype", newtype);
}

template <class Count>
int check_lengths(std::string_view function, Count count, const Count* lengths) {
  if (int rc = checks::pointer(function, "array_of_blocklengths", lengths, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  for (Count i = 0; i < count; ++i) {
    if (int rc = checks::block_length(function, entry("array_of_blocklengths", i), lengths[i]);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  return MPI_SUCCESS;
}

int check_block_length(std::string_view function, long long blocklength) {
  return checks::block_length(function, "blocklength", blocklength);
}

template <class Array>
int check_displacements(std::string_view function, long long count, const Array* displacements) {
  return checks::pointer(function, "array_of_displacements", displacements, count);
}

// Strides and displacements counted in extents of the old type become bytes.
MPI_Aint in_bytes(long long elements, MPI_Datatype oldtype) {
  return static_cast<MPI_Aint>(elements) * oldtype->extent();
}

std::size_t length(long long value) {
  return static_cast<std::size_t>(value);
}

template <class Count>
int contiguous(std::string_view function, Count count, MPI_Datatype oldtype,
               MPI_Datatype* newtype) {
  if (int rc = check_common(function, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  Contents contents{MPI_COMBINER_CONTIGUOUS, {}, {}, {oldtype}};
  keep_count(contents, count);
  // One old element repeated: a non-contiguous old type is stored once, not `count` times.
  *newtype = weft::mpi::build({{0, 1, oldtype}}, Padding::none, std::move(contents),
                              {length(count), oldtype->extent()});
  return MPI_SUCCESS;
}

// MPI_Type_vector (stride in elements) and MPI_Type_create_hvector (in bytes).
template <bool kInElements, class Count, class Stride>
int vector(std::string_view function, Count count, Count blocklength, Stride stride,
           MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const int combiner = kInElements ? MPI_COMBINER_VECTOR : MPI_COMBINER_HVECTOR;
  if (int rc = check_common(function, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_block_length(function, blocklength); rc != MPI_SUCCESS) return rc;
  Contents contents{combiner, {}, {}, {oldtype}};
  keep_count(contents, count);
  keep_count(contents, blocklength);
  MPI_Aint bytes = 0;
  if constexpr (kInElements) {
    keep_count(contents, stride);
    bytes = in_bytes(stride, oldtype);
  } else {
    keep_bytes(contents, stride);
    bytes = static_cast<MPI_Aint>(stride);
  }
  *newtype = weft::mpi::build({{0, length(blocklength), oldtype}}, Padding::none,
                              std::move(contents), {length(count), bytes});
  return MPI_SUCCESS;
}

// MPI_Type_indexed (displacements in elements) and MPI_Type_create_hindexed (in bytes).
// A displacement kept as the form gives it: elements as counts, bytes as addresses.
template <bool kInElements, class Displacement>
MPI_Aint place(Contents& contents, Displacement displacement, MPI_Datatype oldtype) {
  if constexpr (kInElements) {
    keep_count(contents, displacement);
    return in_bytes(displacement, oldtype);
  } else {
    keep_bytes(contents, displacement);
    return static_cast<MPI_Aint>(displacement);
  }
}

template <bool kInElements, class Count, class Displacement>
int indexed(std::string_view function, Count count, const Count blocklengths[],
            const Displacement displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const int combiner = kInElements ? MPI_COMBINER_INDEXED : MPI_COMBINER_HINDEXED;
  if (int rc = check_common(function, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_lengths(function, count, blocklengths); rc != MPI_SUCCESS) return rc;
  if (int rc = check_displacements(function, count, displacements); rc != MPI_SUCCESS) return rc;
  std::vector<Piece> pieces(length(count));
  Contents contents{combiner, {}, {}, {oldtype}};
  keep_count(contents, count);
  for (Count i = 0; i < count; ++i) {
    pieces[length(i)] = {0, length(blocklengths[i]), oldtype};
    keep_count(contents, blocklengths[i]);
  }
  for (Count i = 0; i < count; ++i) {
    pieces[length(i)].displacement = place<kInElements>(contents, displacements[i], oldtype);
  }
  *newtype = weft::mpi::build(pieces, Padding::none, std::move(contents));
  return MPI_SUCCESS;
}

// MPI_Type_create_indexed_block (displacements in elements) and _hindexed_block (in bytes).
template <bool kInElements, class Count, class Displacement>
int indexed_block(std::string_view function, Count count, Count blocklength,
                  const Displacement displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const int combiner = kInElements ? MPI_COMBINER_INDEXED_BLOCK : MPI_COMBINER_HINDEXED_BLOCK;
  if (int rc = check_common(function, count, oldtype, newtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_block_length(function, blocklength); rc != MPI_SUCCESS) return rc;
  if (int rc = check_displacements(function, count, displacements); rc != MPI_SUCCESS) return rc;
  std::vector<Piece> pieces;
  Contents contents{combiner, {}, {}, {oldtype}};
  keep_count(contents, count);
  keep_count(contents, blocklength);
  for (Count i = 0; i < count; ++i) {
    pieces.push_back(
        {place<kInElements>(contents, displacements[i], oldtype), length(blocklength), oldtype});
  }
  *newtype = weft::mpi::build(pieces, Padding::none, std::move(contents));
  return MPI_SUCCESS;
}

template <class Count, class Displacement>
int structure(std::string_view function, Count count, const Count blocklengths[],
              const Displacement displacements[], const MPI_Datatype types[],
              MPI_Datatype* newtype) {
  if (int rc = checks::count(function, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_lengths(function, count, blocklengths); rc != MPI_SUCCESS) return rc;
  if (int rc = check_displacements(function, count, displacements); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(function, "array_of_types", types, count); rc != MPI_SUCCESS) {
    return rc;
  }
  for (Count i = 0; i < count; ++i) {
    if (int rc = checks::type(function, entry("array_of_types", i), types[i]); rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (int rc = checks::pointer(function, "newtype", newtype); rc != MPI_SUCCESS) return rc;
  std::vector<Piece> pieces;
  Contents contents{MPI_COMBINER_STRUCT, {}, {}, {}};
  keep_count(contents, count);
  for (Count i = 0; i < count; ++i) {
    pieces.push_back({static_cast<MPI_Aint>(displacements[i]), length(blocklengths[i]), types[i]});
    keep_count(contents, blocklengths[i]);
    contents.types.push_back(types[i]);
  }
  for (Count i = 0; i < count; ++i) keep_bytes(contents, displacements[i]);
  *newtype = weft::mpi::build(pieces, Padding::alignment, std::move(contents));
  return MPI_SUCCESS;
}

template <class Bytes>
int resized(std::string_view function, MPI_Datatype oldtype, Bytes lb, Bytes extent,
            MPI_Datatype* newtype) {
  if (int rc = checks::type(function, "oldtype", oldtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(function, "newtype", newtype); rc != MPI_SUCCESS) return rc;
  Contents contents{MPI_COMBINER_RESIZED, {}, {}, {oldtype}};
  keep_bytes(contents, lb);
  keep_bytes(contents, extent);
  *newtype = weft::mpi::build_resized(oldtype, static_cast<MPI_Aint>(lb),
                                      static_cast<MPI_Aint>(extent), std::move(contents));
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_contiguous);

extern "C" int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype,
                                      MPI_Datatype* newtype) {
  return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_contiguous_c);

extern "C" int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  return vector<true>("MPI_Type_vector", count, blocklength, stride, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_vector);

extern "C" int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                  MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return vector<true>("MPI_Type_vector_c", count, blocklength, stride, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_vector_c);

extern "C" int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                        MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return vector<false>("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_hvector);

extern "C" int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                          MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return vector<false>("MPI_Type_create_hvector_c", count, blocklength, stride, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_hvector_c);

extern "C" int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                                 const int array_of_displacements[], MPI_Datatype oldtype,
                                 MPI_Datatype* newtype) {
  return indexed<true>("MPI_Type_indexed", count, array_of_blocklengths, array_of_displacements,
                       oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_indexed);

extern "C" int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                   const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  return indexed<true>("MPI_Type_indexed_c", count, array_of_blocklengths, array_of_displacements,
                       oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_indexed_c);

extern "C" int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                         const MPI_Aint array_of_displacements[],
                                         MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexed<false>("MPI_Type_create_hindexed", count, array_of_blocklengths,
                        array_of_displacements, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_hindexed);

extern "C" int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                           const MPI_Count array_of_displacements[],
                                           MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexed<false>("MPI_Type_create_hindexed_c", count, array_of_blocklengths,
                        array_of_displacements, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_hindexed_c);

extern "C" int PMPI_Type_create_indexed_block(int count, int blocklength,
                                              const int array_of_displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexed_block<true>("MPI_Type_create_indexed_block", count, blocklength,
                             array_of_displacements, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_indexed_block);

extern "C" int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                                const MPI_Count array_of_displacements[],
                                                MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexed_block<true>("MPI_Type_create_indexed_block_c", count, blocklength,
                             array_of_displacements, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_indexed_block_c);

extern "C" int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                               const MPI_Aint array_of_displacements[],
                                               MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexed_block<false>("MPI_Type_create_hindexed_block", count, blocklength,
                              array_of_displacements, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_hindexed_block);

extern "C" int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                                 const MPI_Count array_of_displacements[],
                                                 MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexed_block<false>("MPI_Type_create_hindexed_block_c", count, blocklength,
                              array_of_displacements, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_hindexed_block_c);

extern "C" int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                       const MPI_Aint array_of_displacements[],
                                       const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  return structure("MPI_Type_create_struct", count, array_of_blocklengths, array_of_displacements,
                   array_of_types, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_struct);

extern "C" int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                         const MPI_Count array_of_displacements[],
                                         const MPI_Datatype array_of_types[],
                                         MPI_Datatype* newtype) {
  return structure("MPI_Type_create_struct_c", count, array_of_blocklengths, array_of_displacements,
                   array_of_types, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_struct_c);

extern "C" int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                        MPI_Datatype* newtype) {
  return resized("MPI_Type_create_resized", oldtype, lb, extent, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_resized);

extern "C" int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                                          MPI_Datatype* newtype) {
  return resized("MPI_Type_create_resized_c", oldtype, lb, extent, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_create_resized_c);

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
