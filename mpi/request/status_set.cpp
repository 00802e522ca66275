// Setting a status, for the query_fn of generalized requests (MPI-4.1 13.3):
// MPI_Status_set_elements(_x) and MPI_Status_set_cancelled, and MPI-4.1's accessors
// MPI_Status_set/get_source, _tag and _error.
#include <climits>
#include <string>
#include <string_view>

#include "datatype/datatype.h"
#include "errhan/error.h"
#include "util/profiling.h"

namespace {

int check_status(std::string_view function, const void* status, const void* out = "") {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (status != nullptr && out != nullptr) return MPI_SUCCESS;
  return weft::mpi::raise(MPI_COMM_WORLD, function, MPI_ERR_ARG,
                          status == nullptr ? "status = NULL, expected a status"
                                            : "the result's address is NULL, expected where to "
                                              "store it");
}

MPI_Count elements_in(MPI_Datatype datatype, MPI_Count bytes) {
  MPI_Status probe{};
  probe.weft_bytes = bytes;
  MPI_Count elements = 0;
  PMPI_Get_elements_x(&probe, datatype, &elements);
  return elements;
}

// The bytes that hold the first `count` basic elements of a stream of `datatype`: what makes
// MPI_Get_elements report `count` (and MPI_Get_count the whole elements among them).
MPI_Count bytes_of_elements(MPI_Datatype datatype, MPI_Count count) {
  const auto size = static_cast<MPI_Count>(datatype->size());
  if (size == 0 || count == 0) return 0;
  if (const weft_mpi_datatype* basic = datatype->basic(); basic != nullptr) {
    return count * static_cast<MPI_Count>(basic->size());
  }
  // A type mixing basic types: whole elements, then the bytes that end the remaining basic
  // elements inside one (found by scanning one element's bytes: such types are small).
  const MPI_Count per_element = elements_in(datatype, size);
  MPI_Count bytes = count / per_element * size;
  const MPI_Count rest = count % per_element;
  for (MPI_Count b = 0; rest > 0 && b < size; ++b) {
    if (elements_in(datatype, b) == rest) return bytes + b;
  }
  return bytes;
}

int set_elements(std::string_view function, MPI_Status* status, MPI_Datatype datatype,
                 MPI_Count count) {
  if (int rc = check_status(function, status); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_datatype(MPI_COMM_WORLD, function, "datatype", datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (count < 0) {
    return weft::mpi::raise(MPI_COMM_WORLD, function, MPI_ERR_COUNT,
                            "count = " + std::to_string(count) + ", expected >= 0");
  }
  if (count > 0 && datatype->size() == 0) {
    return weft::mpi::raise(MPI_COMM_WORLD, function, MPI_ERR_TYPE,
                            "datatype holds no data, expected one with basic elements for count "
                            "= " +
                                std::to_string(count));
  }
  status->weft_bytes = bytes_of_elements(datatype, count);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return set_elements("MPI_Status_set_elements", status, datatype, count);
}
WEFT_MPI_ALIAS(MPI_Status_set_elements);

extern "C" int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype,
                                          MPI_Count count) {
  return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}
WEFT_MPI_ALIAS(MPI_Status_set_elements_x);

extern "C" int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  if (int rc = check_status("MPI_Status_set_cancelled", status); rc != MPI_SUCCESS) return rc;
  status->weft_cancelled = flag != 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_set_cancelled);

extern "C" int PMPI_Status_set_source(MPI_Status* status, int source) {
  if (int rc = check_status("MPI_Status_set_source", status); rc != MPI_SUCCESS) return rc;
  status->MPI_SOURCE = source;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_set_source);

extern "C" int PMPI_Status_set_tag(MPI_Status* status, int tag) {
  if (int rc = check_status("MPI_Status_set_tag", status); rc != MPI_SUCCESS) return rc;
  status->MPI_TAG = tag;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_set_tag);

extern "C" int PMPI_Status_set_error(MPI_Status* status, int error) {
  if (int rc = check_status("MPI_Status_set_error", status); rc != MPI_SUCCESS) return rc;
  status->MPI_ERROR = error;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_set_error);

extern "C" int PMPI_Status_get_source(const MPI_Status* status, int* source) {
  if (int rc = check_status("MPI_Status_get_source", status, source); rc != MPI_SUCCESS) {
    return rc;
  }
  *source = status->MPI_SOURCE;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_get_source);

extern "C" int PMPI_Status_get_tag(const MPI_Status* status, int* tag) {
  if (int rc = check_status("MPI_Status_get_tag", status, tag); rc != MPI_SUCCESS) return rc;
  *tag = status->MPI_TAG;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_get_tag);

extern "C" int PMPI_Status_get_error(const MPI_Status* status, int* error) {
  if (int rc = check_status("MPI_Status_get_error", status, error); rc != MPI_SUCCESS) return rc;
  *error = status->MPI_ERROR;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_get_error);
