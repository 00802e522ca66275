// MPI_Type_create_subarray and MPI_Type_create_darray (MPI-4.1 5.1.3-5.1.4): the part of an
// n-dimensional array one process holds, built from vectors and resized types as the standard
// defines them (and as MPICH and ROMIO build them, so that bounds and type maps agree), returned
// under their own combiner.
#include <algorithm>
#include <string>
#include <vector>

#include "datatype/datatype_build.h"
#include "datatype/datatype_checks.h"
#include "util/profiling.h"

namespace checks = weft::mpi::datatype_checks;
using weft::mpi::Contents;

namespace {

std::string entry(std::string_view array, int i) {
  return std::string(array) + "[" + std::to_string(i) + "]";
}

// Intermediate types, freed when the final one (which retains what it needs) is built.
class Temporaries {
 public:
  Temporaries() = default;
  Temporaries(const Temporaries&) = delete;
  Temporaries& operator=(const Temporaries&) = delete;
  ~Temporaries() {
    for (MPI_Datatype& type : types_) PMPI_Type_free(&type);
  }
  MPI_Datatype keep(MPI_Datatype type) {
    types_.push_back(type);
    return type;
  }

 private:
  std::vector<MPI_Datatype> types_;
};

MPI_Datatype contiguous(Temporaries& temporaries, int count, MPI_Datatype old) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  PMPI_Type_contiguous(count, old, &type);
  return temporaries.keep(type);
}

MPI_Datatype hvector(Temporaries& temporaries, int count, int length, MPI_Aint stride,
                     MPI_Datatype old) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  PMPI_Type_create_hvector(count, length, stride, old, &type);
  return temporaries.keep(type);
}

// `type` moved `displacement` bytes into an element of bounds [0, extent).
MPI_Datatype placed(Temporaries& temporaries, MPI_Datatype type, MPI_Aint displacement,
                    MPI_Aint extent, Contents contents) {
  const int one = 1;
  MPI_Datatype moved = MPI_DATATYPE_NULL;
  PMPI_Type_create_hindexed(1, &one, &displacement, type, &moved);
  temporaries.keep(moved);
  return weft::mpi::build_resized(moved, 0, extent, std::move(contents));
}

int check_order(std::string_view function, int order) {
  if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN) return MPI_SUCCESS;
  return checks::fail(
      function, MPI_ERR_ARG,
      "order = " + std::to_string(order) + ", expected MPI_ORDER_C or MPI_ORDER_FORTRAN");
}

int check_positive(std::string_view function, std::string_view argument, long long value) {
  if (value > 0) return MPI_SUCCESS;
  return checks::fail(function, MPI_ERR_ARG,
                      std::string(argument) + " = " + std::to_string(value) + ", expected > 0");
}

// Dimensions from the one that varies slowest in memory to the fastest.
std::vector<int> slow_to_fast(int ndims, int order) {
  std::vector<int> dims(static_cast<std::size_t>(ndims));
  for (int i = 0; i < ndims; ++i)
    dims[static_cast<std::size_t>(i)] = order == MPI_ORDER_C ? i : ndims - 1 - i;
  return dims;
}

}  // namespace

extern "C" int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                                         const int array_of_subsizes[], const int array_of_starts[],
                                         int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_subarray";
  if (int rc = check_positive(kFunction, "ndims", ndims); rc != MPI_SUCCESS) return rc;
  for (auto [array, name] : {std::pair{array_of_sizes, "array_of_sizes"},
                             {array_of_subsizes, "array_of_subsizes"},
                             {array_of_starts, "array_of_starts"}}) {
    if (int rc = checks::pointer(kFunction, name, array, ndims); rc != MPI_SUCCESS) return rc;
  }
  for (int i = 0; i < ndims; ++i) {
    if (int rc = check_positive(kFunction, entry("array_of_sizes", i), array_of_sizes[i]);
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (array_of_subsizes[i] < 0 || array_of_subsizes[i] > array_of_sizes[i] ||
        array_of_starts[i] < 0 || array_of_starts[i] > array_of_sizes[i] - array_of_subsizes[i]) {
      return checks::fail(kFunction, MPI_ERR_ARG,
                          "dimension " + std::to_string(i) + ": subsize " +
                              std::to_string(array_of_subsizes[i]) + " from start " +
                              std::to_string(array_of_starts[i]) + " in size " +
                              std::to_string(array_of_sizes[i]) +
                              ", expected 0 <= start and 0 <= subsize and start + subsize <= size");
    }
  }
  if (int rc = check_order(kFunction, order); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::type(kFunction, "oldtype", oldtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "newtype", newtype); rc != MPI_SUCCESS) return rc;

  const MPI_Aint extent = oldtype->extent();
  const std::vector<int> dims = slow_to_fast(ndims, order);
  Temporaries temporaries;
  // The fastest dimension first, each slower one an hvector of the faster ones, `stride` bytes
  // (the size of everything faster) apart; the start is a displacement in the whole array.
  const int fastest = dims.back();
  MPI_Datatype type = contiguous(temporaries, array_of_subsizes[fastest], oldtype);
  MPI_Aint stride = extent * array_of_sizes[fastest];
  MPI_Aint displacement = extent * array_of_starts[fastest];
  for (int k = ndims - 2; k >= 0; --k) {
    const int d = dims[static_cast<std::size_t>(k)];
    type = hvector(temporaries, array_of_subsizes[d], 1, stride, type);
    displacement += stride * array_of_starts[d];
    stride *= array_of_sizes[d];
  }
  Contents contents{MPI_COMBINER_SUBARRAY, {ndims}, {}, {oldtype}};
  for (const int* array : {array_of_sizes, array_of_subsizes, array_of_starts}) {
    contents.integers.insert(contents.integers.end(), array, array + ndims);
  }
  contents.integers.push_back(order);
  *newtype = placed(temporaries, type, displacement, stride, std::move(contents));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_subarray);

namespace {

// One dimension of a distributed array: this process's part of it along `dim`, as a type of
// `old` (the faster dimensions), and where that part starts in elements of the dimension.
struct Dimension {
  int gsize;
  int distribution;
  int darg;
  int nprocs;
  int coord;
  MPI_Aint stride;  // bytes between consecutive elements of this dimension
};

// MPI-4.1 5.1.4's block distribution: blocks of darg (default ceil(gsize / nprocs)) elements.
MPI_Datatype block(Temporaries& temporaries, const Dimension& d, MPI_Datatype old, bool first,
                   int* start) {
  const int size =
      d.darg == MPI_DISTRIBUTE_DFLT_DARG ? (d.gsize + d.nprocs - 1) / d.nprocs : d.darg;
  const int mine = std::max(0, std::min(size, d.gsize - size * d.coord));
  *start = mine == 0 ? 0 : size * d.coord;
  return first ? contiguous(temporaries, mine, old) : hvector(temporaries, mine, 1, d.stride, old);
}

// The cyclic distribution: blocks of darg (default 1) elements dealt round-robin; the last block
// may be short. The fastest dimension places its own start, as ROMIO does.
MPI_Datatype cyclic(Temporaries& temporaries, const Dimension& d, MPI_Datatype old,
                    MPI_Aint element_extent, bool first, int* start) {
  const int size = d.darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : d.darg;
  const long long first_index = static_cast<long long>(d.coord) * size;
  const long long last_index = d.gsize - 1;
  long long mine = 0;
  if (last_index >= first_index) {
    const long long span = last_index - first_index + 1;
    const long long round = static_cast<long long>(d.nprocs) * size;
    mine = span / round * size + std::min<long long>(span % round, size);
  }
  const int blocks = static_cast<int>(mine / size);
  const int rest = static_cast<int>(mine % size);
  const MPI_Aint stride = d.nprocs * static_cast<MPI_Aint>(size) * d.stride;
  MPI_Datatype type = hvector(temporaries, blocks, size, stride, old);
  if (rest != 0) {
    const int lengths[] = {1, rest};
    const MPI_Aint displacements[] = {0, blocks * stride};
    const MPI_Datatype types[] = {type, old};
    MPI_Datatype with_rest = MPI_DATATYPE_NULL;
    PMPI_Type_create_struct(2, lengths, displacements, types, &with_rest);
    type = temporaries.keep(with_rest);
  }
  *start = mine == 0 ? 0 : static_cast<int>(first_index);
  if (first) {
    const int one = 1;
    const MPI_Aint displacement = first_index * element_extent;
    MPI_Datatype moved = MPI_DATATYPE_NULL;
    PMPI_Type_create_hindexed(1, &one, &displacement, type, &moved);
    type = temporaries.keep(moved);
    *start = 0;
  }
  return type;
}

}  // namespace

extern "C" int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                                       const int array_of_distribs[], const int array_of_dargs[],
                                       const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                       MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_darray";
  if (int rc = check_positive(kFunction, "size", size); rc != MPI_SUCCESS) return rc;
  if (rank < 0 || rank >= size) {
    return checks::fail(kFunction, MPI_ERR_ARG,
                        "rank = " + std::to_string(rank) + ", expected 0.." +
                            std::to_string(size - 1) + " (size - 1)");
  }
  if (int rc = check_positive(kFunction, "ndims", ndims); rc != MPI_SUCCESS) return rc;
  for (auto [array, name] : {std::pair{array_of_gsizes, "array_of_gsizes"},
                             {array_of_distribs, "array_of_distribs"},
                             {array_of_dargs, "array_of_dargs"},
                             {array_of_psizes, "array_of_psizes"}}) {
    if (int rc = checks::pointer(kFunction, name, array, ndims); rc != MPI_SUCCESS) return rc;
  }
  long long processes = 1;
  for (int i = 0; i < ndims; ++i) {
    if (int rc = check_positive(kFunction, entry("array_of_gsizes", i), array_of_gsizes[i]);
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_positive(kFunction, entry("array_of_psizes", i), array_of_psizes[i]);
        rc != MPI_SUCCESS) {
      return rc;
    }
    processes *= array_of_psizes[i];
    const int distribution = array_of_distribs[i];
    const int darg = array_of_dargs[i];
    if (distribution != MPI_DISTRIBUTE_BLOCK && distribution != MPI_DISTRIBUTE_CYCLIC &&
        distribution != MPI_DISTRIBUTE_NONE) {
      return checks::fail(kFunction, MPI_ERR_ARG,
                          entry("array_of_distribs", i) + " = " + std::to_string(distribution) +
                              ", expected MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE");
    }
    if (distribution == MPI_DISTRIBUTE_NONE && array_of_psizes[i] != 1) {
      return checks::fail(kFunction, MPI_ERR_ARG,
                          entry("array_of_psizes", i) + " = " + std::to_string(array_of_psizes[i]) +
                              " for MPI_DISTRIBUTE_NONE, expected 1");
    }
    if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0) {
      return checks::fail(kFunction, MPI_ERR_ARG,
                          entry("array_of_dargs", i) + " = " + std::to_string(darg) +
                              ", expected > 0 or MPI_DISTRIBUTE_DFLT_DARG");
    }
    if (distribution == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG &&
        static_cast<long long>(darg) * array_of_psizes[i] < array_of_gsizes[i]) {
      return checks::fail(kFunction, MPI_ERR_ARG,
                          entry("array_of_dargs", i) + " = " + std::to_string(darg) +
                              ": blocks of it on " + std::to_string(array_of_psizes[i]) +
                              " processes do not cover " + std::to_string(array_of_gsizes[i]) +
                              " elements, expected darg * psize >= gsize");
    }
  }
  if (processes != size) {
    return checks::fail(kFunction, MPI_ERR_ARG,
                        "the product of array_of_psizes is " + std::to_string(processes) +
                            ", expected size = " + std::to_string(size));
  }
  if (int rc = check_order(kFunction, order); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::type(kFunction, "oldtype", oldtype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "newtype", newtype); rc != MPI_SUCCESS) return rc;

  // The process grid is numbered in C order whatever the array's order (MPI-4.1 5.1.4).
  std::vector<int> coords(static_cast<std::size_t>(ndims));
  for (int i = ndims - 1, left = rank; i >= 0; --i) {
    coords[static_cast<std::size_t>(i)] = left % array_of_psizes[i];
    left /= array_of_psizes[i];
  }
  const MPI_Aint extent = oldtype->extent();
  const std::vector<int> dims = slow_to_fast(ndims, order);
  Temporaries temporaries;
  MPI_Datatype type = oldtype;
  MPI_Aint stride = extent;
  MPI_Aint displacement = 0;
  for (int k = ndims - 1; k >= 0; --k) {
    const int i = dims[static_cast<std::size_t>(k)];
    const bool first = k == ndims - 1;
    const Dimension d{array_of_gsizes[i],
                      array_of_distribs[i],
                      array_of_dargs[i],
                      array_of_psizes[i],
                      coords[static_cast<std::size_t>(i)],
                      stride};
    int start = 0;
    type =
        d.distribution == MPI_DISTRIBUTE_CYCLIC
            ? cyclic(temporaries, d, type, extent, first, &start)
            : block(temporaries,
                    d.distribution == MPI_DISTRIBUTE_NONE
                        ? Dimension{d.gsize, d.distribution, MPI_DISTRIBUTE_DFLT_DARG, 1, 0, stride}
                        : d,
                    type, first, &start);
    // Each dimension's part spans the whole dimension: the next one repeats it that far apart.
    MPI_Datatype spanning = MPI_DATATYPE_NULL;
    PMPI_Type_create_resized(type, 0, stride * array_of_gsizes[i], &spanning);
    type = temporaries.keep(spanning);
    displacement += stride * start;
    stride *= array_of_gsizes[i];
  }
  Contents contents{MPI_COMBINER_DARRAY, {size, rank, ndims}, {}, {oldtype}};
  for (const int* array : {array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes}) {
    contents.integers.insert(contents.integers.end(), array, array + ndims);
  }
  contents.integers.push_back(order);
  *newtype = placed(temporaries, type, displacement, stride, std::move(contents));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_darray);
