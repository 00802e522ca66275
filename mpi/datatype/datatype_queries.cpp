// Committing, freeing, naming and querying datatypes (MPI-3.1 4.1.5, 4.1.8-4.1.10, 6.8); the
// envelope and contents are datatype_contents.cpp's.
#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>

#include "attr/datatype_attributes.h"
#include "datatype/datatype_checks.h"
#include "datatype/datatype_layout.h"
#include "util/profiling.h"

namespace checks = weft::mpi::datatype_checks;

namespace {

int check_query(std::string_view function, MPI_Datatype datatype, const void* out,
                std::string_view out_name) {
  if (int rc = checks::type(function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  return checks::pointer(function, out_name, out);
}

}  // namespace

extern "C" int PMPI_Type_commit(MPI_Datatype* datatype) {
  constexpr std::string_view kFunction = "MPI_Type_commit";
  if (int rc = checks::pointer(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::type(kFunction, "*datatype", *datatype); rc != MPI_SUCCESS) return rc;
  // The layout is final once built: committing only records that the user did it.
  if (!(*datatype)->predefined()) {
    (*datatype)->layout->committed.store(true, std::memory_order_relaxed);
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_commit);

extern "C" int PMPI_Type_free(MPI_Datatype* datatype) {
  constexpr std::string_view kFunction = "MPI_Type_free";
  if (int rc = checks::pointer(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::type(kFunction, "*datatype", *datatype); rc != MPI_SUCCESS) return rc;
  if ((*datatype)->predefined()) {
    return checks::fail(kFunction, MPI_ERR_TYPE,
                        "*datatype = " + std::string((*datatype)->name()) +
                            ", expected a derived datatype (predefined ones cannot be freed)");
  }
  // The Fortran 90 and value-index types are predefined to the program (datatype_matching.cpp).
  switch (weft::mpi::contents_of(*datatype).combiner) {
    case MPI_COMBINER_F90_INTEGER:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_VALUE_INDEX:
      return checks::fail(kFunction, MPI_ERR_TYPE,
                          "*datatype is a predefined Fortran 90 or value-index type, expected a "
                          "derived datatype (predefined ones cannot be freed)");
    default:
      break;
  }
  // MPI-4.1 7.7.4: the delete callbacks run at the free; a failing one keeps the type.
  if (int rc = weft::mpi::delete_type_attributes(*datatype, kFunction); rc != MPI_SUCCESS) {
    return rc;
  }
  // Pending operations and types built on it hold references of their own.
  (*datatype)->release();
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_free);

extern "C" int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  if (int rc = check_query("MPI_Type_size_x", datatype, size, "size"); rc != MPI_SUCCESS) {
    return rc;
  }
  *size = static_cast<MPI_Count>(datatype->size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_size_x);

extern "C" int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  if (int rc = check_query("MPI_Type_size", datatype, size, "size"); rc != MPI_SUCCESS) return rc;
  *size = datatype->size() > INT_MAX ? MPI_UNDEFINED : static_cast<int>(datatype->size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_size);

extern "C" int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  constexpr std::string_view kFunction = "MPI_Type_get_extent";
  if (int rc = check_query(kFunction, datatype, lb, "lb"); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "extent", extent); rc != MPI_SUCCESS) return rc;
  *lb = datatype->lb();
  *extent = datatype->extent();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_get_extent);

extern "C" int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  constexpr std::string_view kFunction = "MPI_Type_get_extent_x";
  if (int rc = check_query(kFunction, datatype, lb, "lb"); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "extent", extent); rc != MPI_SUCCESS) return rc;
  *lb = datatype->lb();
  *extent = datatype->extent();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_get_extent_x);

extern "C" int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb,
                                         MPI_Aint* true_extent) {
  constexpr std::string_view kFunction = "MPI_Type_get_true_extent";
  if (int rc = check_query(kFunction, datatype, true_lb, "true_lb"); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "true_extent", true_extent); rc != MPI_SUCCESS) {
    return rc;
  }
  *true_lb = datatype->true_lb();
  *true_extent = datatype->true_extent();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_get_true_extent);

extern "C" int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb,
                                           MPI_Count* true_extent) {
  constexpr std::string_view kFunction = "MPI_Type_get_true_extent_x";
  if (int rc = check_query(kFunction, datatype, true_lb, "true_lb"); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "true_extent", true_extent); rc != MPI_SUCCESS) {
    return rc;
  }
  *true_lb = datatype->true_lb();
  *true_extent = datatype->true_extent();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_get_true_extent_x);

extern "C" int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  constexpr std::string_view kFunction = "MPI_Type_set_name";
  if (int rc = checks::type(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "type_name", type_name); rc != MPI_SUCCESS) return rc;
  weft_mpi_datatype::Layout& layout = *datatype->layout;
  // Longer names are truncated, as MPI-3.1 6.8 allows.
  const std::size_t length = std::min(std::strlen(type_name), sizeof(layout.name.text) - 1);
  std::lock_guard lock(layout.name_lock);
  std::memcpy(layout.name.text, type_name, length);
  layout.name.text[length] = '\0';
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_set_name);

extern "C" int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  constexpr std::string_view kFunction = "MPI_Type_get_name";
  if (int rc = checks::type(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "type_name", type_name); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "resultlen", resultlen); rc != MPI_SUCCESS) return rc;
  weft_mpi_datatype::Layout& layout = *datatype->layout;
  std::lock_guard lock(layout.name_lock);
  const std::size_t length = std::strlen(layout.name.text);
  std::memcpy(type_name, layout.name.text, length + 1);
  *resultlen = static_cast<int>(length);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_get_name);
