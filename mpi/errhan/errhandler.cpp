#include "errhan/errhandler.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "errhan/error_text.h"
#include "errhan/user_errors.h"
#include "util/profiling.h"

weft_mpi_errhandler weft_mpi_errors_are_fatal;
weft_mpi_errhandler weft_mpi_errors_return;

using weft::mpi::check_comm;
using weft::mpi::check_initialized;
using weft::mpi::raise;

namespace {

bool predefined(MPI_Errhandler handler) {
  return handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRORS_RETURN;
}

// The MPI-3.1 error classes weft raises or reports (MPI_Error_class maps each to itself).
bool known_class(int code) {
  return code >= MPI_SUCCESS && code < MPI_ERR_LASTCODE &&
         weft::mpi::error_class_name(code) != "MPI_ERR_UNKNOWN";
}

int copy_out(std::string_view text, char* out, int* length) {
  const std::size_t n = std::min<std::size_t>(text.size(), MPI_MAX_ERROR_STRING - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  *length = static_cast<int>(n);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  if (int rc = check_initialized("MPI_Comm_set_errhandler"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, "MPI_Comm_set_errhandler"); rc != MPI_SUCCESS) return rc;
  if (errhandler == MPI_ERRHANDLER_NULL) {
    return raise(comm, "MPI_Comm_set_errhandler", MPI_ERR_ARG,
                 "errhandler = MPI_ERRHANDLER_NULL, expected an error handler");
  }
  comm->local_of_caller().errhandler = errhandler;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_set_errhandler);

extern "C" int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  if (int rc = check_initialized("MPI_Comm_get_errhandler"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, "MPI_Comm_get_errhandler"); rc != MPI_SUCCESS) return rc;
  if (errhandler == nullptr) {
    return raise(comm, "MPI_Comm_get_errhandler", MPI_ERR_ARG,
                 "errhandler = NULL, expected where to store the handler");
  }
  *errhandler = comm->local_of_caller().errhandler;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_get_errhandler);

extern "C" int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                                           MPI_Errhandler* errhandler) {
  if (int rc = check_initialized("MPI_Comm_create_errhandler"); rc != MPI_SUCCESS) return rc;
  if (function == nullptr || errhandler == nullptr) {
    return raise(MPI_COMM_WORLD, "MPI_Comm_create_errhandler", MPI_ERR_ARG,
                 function == nullptr ? "function = NULL, expected a handler function"
                                     : "errhandler = NULL, expected where to store the handle");
  }
  *errhandler = new weft_mpi_errhandler{function};
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_create_errhandler);

extern "C" int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  if (int rc = check_initialized("MPI_Comm_call_errhandler"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, "MPI_Comm_call_errhandler"); rc != MPI_SUCCESS) return rc;
  raise(comm, "MPI_Comm_call_errhandler", errorcode, "raised by the program");
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_call_errhandler);

// Communicators keep the handler they were given, so a freed user handler is never deleted: the
// handle is nulled and the object (a function pointer) stays for its communicators.
extern "C" int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  if (int rc = check_initialized("MPI_Errhandler_free"); rc != MPI_SUCCESS) return rc;
  if (errhandler == nullptr || *errhandler == MPI_ERRHANDLER_NULL || predefined(*errhandler)) {
    return raise(MPI_COMM_WORLD, "MPI_Errhandler_free", MPI_ERR_ARG,
                 "errhandler is null or predefined, expected one made by "
                 "MPI_Comm_create_errhandler");
  }
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Errhandler_free);

extern "C" int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (string == nullptr || resultlen == nullptr) return MPI_ERR_ARG;
  if (std::optional<std::string> user = weft::mpi::user_errors::string_of(errorcode)) {
    return copy_out(*user, string, resultlen);
  }
  if (!known_class(errorcode)) {
    return copy_out("MPI_ERR_UNKNOWN: unknown error code " + std::to_string(errorcode), string,
                    resultlen);
  }
  std::string text(weft::mpi::error_class_name(errorcode));
  text += ": ";
  text += weft::mpi::error_class_description(errorcode);
  return copy_out(text, string, resultlen);
}
WEFT_MPI_ALIAS(MPI_Error_string);

extern "C" int PMPI_Error_class(int errorcode, int* errorclass) {
  if (errorclass == nullptr) return MPI_ERR_ARG;
  if (std::optional<int> user = weft::mpi::user_errors::class_of(errorcode)) {
    *errorclass = *user;
    return MPI_SUCCESS;
  }
  if (!known_class(errorcode)) return MPI_ERR_ARG;
  *errorclass = errorcode;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Error_class);
