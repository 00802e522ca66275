// Status conversions between C, Fortran's INTEGER(MPI_STATUS_SIZE) and mpi_f08's TYPE(MPI_Status)
// (MPI-4.1 19.3.5). The Fortran forms hold the C status field by field: source, tag, error, then
// weft's cancelled flag and the 64-bit count of bytes received in two integers.
#include <cstring>

#include "errhan/error.h"
#include "mpi.h"
#include "util/profiling.h"

static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
              "a Fortran status must hold a C status");
static_assert(sizeof(MPI_F08_status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint));

// The storage of the Fortran ignore-statuses for code outside a Fortran rank image (mpi.h).
extern "C" {
MPI_Fint mpi_fortran_status_ignore_[MPI_F_STATUS_SIZE];
MPI_Fint mpi_fortran_statuses_ignore_[MPI_F_STATUS_SIZE];
MPI_F08_status mpi_f08_status_ignore_[1];
MPI_F08_status mpi_f08_statuses_ignore_[1];
}

namespace {

// A status argument that is an ignore-status or null is erroneous (MPI-4.1 19.3.5).
int check_status(const void* status, const char* function, const char* argument) {
  if (status != nullptr && status != mpi_fortran_status_ignore_ &&
      status != mpi_fortran_statuses_ignore_ && status != mpi_f08_status_ignore_ &&
      status != mpi_f08_statuses_ignore_) {
    return MPI_SUCCESS;
  }
  return weft::mpi::raise(
      MPI_COMM_NULL, function, MPI_ERR_ARG,
      std::string(argument) + " is " +
          (status == nullptr ? "null or MPI_STATUS_IGNORE" : "an ignore-status") +
          ", expected a status to convert");
}

void to_fields(const MPI_Status& c, MPI_Fint* f) {
  f[MPI_F_SOURCE] = c.MPI_SOURCE;
  f[MPI_F_TAG] = c.MPI_TAG;
  f[MPI_F_ERROR] = c.MPI_ERROR;
  f[3] = c.weft_cancelled;
  std::memcpy(&f[4], &c.weft_bytes, sizeof c.weft_bytes);
}

void from_fields(const MPI_Fint* f, MPI_Status& c) {
  c.MPI_SOURCE = f[MPI_F_SOURCE];
  c.MPI_TAG = f[MPI_F_TAG];
  c.MPI_ERROR = f[MPI_F_ERROR];
  c.weft_cancelled = f[3];
  std::memcpy(&c.weft_bytes, &f[4], sizeof c.weft_bytes);
}

// The fields of an f08 status in the order of a Fortran status.
void f08_to_fields(const MPI_F08_status& s, MPI_Fint* f) {
  f[MPI_F_SOURCE] = s.MPI_SOURCE;
  f[MPI_F_TAG] = s.MPI_TAG;
  f[MPI_F_ERROR] = s.MPI_ERROR;
  std::memcpy(&f[3], s.weft_internal, sizeof s.weft_internal);
}

void fields_to_f08(const MPI_Fint* f, MPI_F08_status& s) {
  s.MPI_SOURCE = f[MPI_F_SOURCE];
  s.MPI_TAG = f[MPI_F_TAG];
  s.MPI_ERROR = f[MPI_F_ERROR];
  std::memcpy(s.weft_internal, &f[3], sizeof s.weft_internal);
}

}  // namespace

extern "C" int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  if (int rc = check_status(c_status, "MPI_Status_c2f", "c_status"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_status(f_status, "MPI_Status_c2f", "f_status"); rc != MPI_SUCCESS) return rc;
  to_fields(*c_status, f_status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_c2f);

extern "C" int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  if (int rc = check_status(f_status, "MPI_Status_f2c", "f_status"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_status(c_status, "MPI_Status_f2c", "c_status"); rc != MPI_SUCCESS) return rc;
  from_fields(f_status, *c_status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_f2c);

extern "C" int PMPI_Status_c2f08(const MPI_Status* c_status, MPI_F08_status* f08_status) {
  if (int rc = check_status(c_status, "MPI_Status_c2f08", "c_status"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_status(f08_status, "MPI_Status_c2f08", "f08_status"); rc != MPI_SUCCESS) {
    return rc;
  }
  MPI_Fint fields[MPI_F_STATUS_SIZE];
  to_fields(*c_status, fields);
  fields_to_f08(fields, *f08_status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_c2f08);

extern "C" int PMPI_Status_f082c(const MPI_F08_status* f08_status, MPI_Status* c_status) {
  if (int rc = check_status(f08_status, "MPI_Status_f082c", "f08_status"); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_status(c_status, "MPI_Status_f082c", "c_status"); rc != MPI_SUCCESS) return rc;
  MPI_Fint fields[MPI_F_STATUS_SIZE];
  f08_to_fields(*f08_status, fields);
  from_fields(fields, *c_status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_f082c);

extern "C" int PMPI_Status_f082f(const MPI_F08_status* f08_status, MPI_Fint* f_status) {
  if (int rc = check_status(f08_status, "MPI_Status_f082f", "f08_status"); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_status(f_status, "MPI_Status_f082f", "f_status"); rc != MPI_SUCCESS) return rc;
  f08_to_fields(*f08_status, f_status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_f082f);

extern "C" int PMPI_Status_f2f08(const MPI_Fint* f_status, MPI_F08_status* f08_status) {
  if (int rc = check_status(f_status, "MPI_Status_f2f08", "f_status"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_status(f08_status, "MPI_Status_f2f08", "f08_status"); rc != MPI_SUCCESS) {
    return rc;
  }
  fields_to_f08(f_status, *f08_status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Status_f2f08);
