// Committing, freeing, naming and querying datatypes (MPI-3.1 4.1.5, 4.1.8-4.1.10, 4.1.13, 6.8).
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

const weft::mpi::Contents& contents_of(MPI_Datatype datatype) {
  static const weft::mpi::Contents kNamed{};
  return datatype->predefined() ? kNamed : datatype->layout->parts->contents;
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

extern "C" int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses,
                                      int* num_datatypes, int* combiner) {
  constexpr std::string_view kFunction = "MPI_Type_get_envelope";
  if (int rc = checks::type(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  for (auto [p, name] : {std::pair{num_integers, "num_integers"},
                         {num_addresses, "num_addresses"},
                         {num_datatypes, "num_datatypes"},
                         {combiner, "combiner"}}) {
    if (int rc = checks::pointer(kFunction, name, p); rc != MPI_SUCCESS) return rc;
  }
  const weft::mpi::Contents& c = contents_of(datatype);
  *num_integers = static_cast<int>(c.integers.size());
  *num_addresses = static_cast<int>(c.addresses.size());
  *num_datatypes = static_cast<int>(c.types.size());
  *combiner = c.combiner;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_get_envelope);

extern "C" int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                                      int max_datatypes, int array_of_integers[],
                                      MPI_Aint array_of_addresses[],
                                      MPI_Datatype array_of_datatypes[]) {
  constexpr std::string_view kFunction = "MPI_Type_get_contents";
  if (int rc = checks::type(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (datatype->predefined()) {
    return checks::fail(kFunction, MPI_ERR_TYPE,
                        "datatype = " + std::string(datatype->name()) +
                            ", expected a derived datatype (MPI_Type_get_envelope says "
                            "MPI_COMBINER_NAMED: a predefined one has no contents)");
  }
  const weft::mpi::Contents& c = contents_of(datatype);
  const auto too_small = [&](std::string_view argument, int max, std::size_t needed) {
    return checks::fail(kFunction, MPI_ERR_ARG,
                        std::string(argument) + " = " + std::to_string(max) + ", expected >= " +
                            std::to_string(needed) + " (MPI_Type_get_envelope's count)");
  };
  if (max_integers < 0 || static_cast<std::size_t>(max_integers) < c.integers.size()) {
    return too_small("max_integers", max_integers, c.integers.size());
  }
  if (max_addresses < 0 || static_cast<std::size_t>(max_addresses) < c.addresses.size()) {
    return too_small("max_addresses", max_addresses, c.addresses.size());
  }
  if (max_datatypes < 0 || static_cast<std::size_t>(max_datatypes) < c.types.size()) {
    return too_small("max_datatypes", max_datatypes, c.types.size());
  }
  const auto integers = static_cast<long long>(c.integers.size());
  const auto addresses = static_cast<long long>(c.addresses.size());
  const auto types = static_cast<long long>(c.types.size());
  if (int rc = checks::pointer(kFunction, "array_of_integers", array_of_integers, integers);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = checks::pointer(kFunction, "array_of_addresses", array_of_addresses, addresses);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = checks::pointer(kFunction, "array_of_datatypes", array_of_datatypes, types);
      rc != MPI_SUCCESS) {
    return rc;
  }
  std::copy(c.integers.begin(), c.integers.end(), array_of_integers);
  std::copy(c.addresses.begin(), c.addresses.end(), array_of_addresses);
  // MPI-3.1 4.1.13: the derived handles returned are the caller's to free.
  for (std::size_t i = 0; i < c.types.size(); ++i) {
    c.types[i]->retain();
    array_of_datatypes[i] = c.types[i];
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_get_contents);

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
