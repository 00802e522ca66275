#include "io/file_error.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "errhan/errhandler.h"
#include "errhan/error.h"
#include "init/fatal.h"
#include "init/world.h"
#include "io/file.h"
#include "util/profiling.h"

namespace weft::mpi::io {
namespace {

// MPI_FILE_NULL's handler, per world rank: a rank is a process to the program.
std::mutex defaults_lock;
std::unordered_map<int, MPI_Errhandler>& defaults() {
  static std::unordered_map<int, MPI_Errhandler> handlers;
  return handlers;
}

void set_default_errhandler(MPI_Errhandler handler) {
  std::lock_guard lock(defaults_lock);
  defaults()[caller_world_rank()] = handler;
}

bool live(MPI_File file) {
  return file != MPI_FILE_NULL && file->magic == File::kLive;
}

}  // namespace

MPI_Errhandler default_errhandler() {
  std::lock_guard lock(defaults_lock);
  auto it = defaults().find(caller_world_rank());
  return it == defaults().end() ? MPI_ERRORS_RETURN : it->second;
}

int raise(MPI_File file, std::string_view function, int error_class, std::string_view detail) {
  std::string message(function);
  message += " (rank " + std::to_string(caller_world_rank()) + "): ";
  message += error_class_name(error_class);
  message += ": ";
  message += detail;
  const MPI_Errhandler handler = live(file) ? file->errhandler : default_errhandler();
  if (handler == MPI_ERRORS_RETURN) return error_class;
  if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRORS_ABORT ||
      handler == MPI_ERRHANDLER_NULL) {
    end_job(message);
  }
  // MPI_File_create_errhandler stored a file handler under the communicator handler's type.
  auto* function_of_file = reinterpret_cast<MPI_File_errhandler_function*>(handler->function);
  int code = error_class;
  MPI_File target = live(file) ? file : MPI_FILE_NULL;
  function_of_file(&target, &code);
  return error_class;
}

int check_file(MPI_File file, std::string_view function) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (file == MPI_FILE_NULL) {
    return raise(file, function, MPI_ERR_FILE, "fh = MPI_FILE_NULL, expected an open file");
  }
  if (file->magic != File::kLive) {
    return raise(MPI_FILE_NULL, function, MPI_ERR_FILE,
                 "fh has been closed (MPI_File_close), expected an open file");
  }
  return MPI_SUCCESS;
}

int class_of_errno(int error) {
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
      return MPI_ERR_ACCESS;
    case EEXIST:
      return MPI_ERR_FILE_EXISTS;
    case ENOSPC:
    case EFBIG:
      return MPI_ERR_NO_SPACE;
    case EDQUOT:
      return MPI_ERR_QUOTA;
    case EROFS:
      return MPI_ERR_READ_ONLY;
    case ENAMETOOLONG:
    case EISDIR:
      return MPI_ERR_BAD_FILE;
    case EBUSY:
    case ETXTBSY:
      return MPI_ERR_FILE_IN_USE;
    default:
      return MPI_ERR_IO;
  }
}

std::string errno_detail(std::string_view what, std::string_view filename, int error) {
  std::string text(what);
  text += " of \"";
  text += filename;
  text += "\" failed: ";
  text += std::strerror(error);
  return text;
}

}  // namespace weft::mpi::io

using weft::mpi::io::check_file;
using weft::mpi::io::raise;

extern "C" int PMPI_File_create_errhandler(MPI_File_errhandler_function* file_errhandler_fn,
                                           MPI_Errhandler* errhandler) {
  if (int rc = weft::mpi::check_initialized("MPI_File_create_errhandler"); rc != MPI_SUCCESS) {
    return rc;
  }
  if (file_errhandler_fn == nullptr || errhandler == nullptr) {
    return raise(MPI_FILE_NULL, "MPI_File_create_errhandler", MPI_ERR_ARG,
                 file_errhandler_fn == nullptr
                     ? "file_errhandler_fn = NULL, expected a handler function"
                     : "errhandler = NULL, expected where to store the handle");
  }
  *errhandler =
      new weft_mpi_errhandler{reinterpret_cast<MPI_Comm_errhandler_function*>(file_errhandler_fn)};
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_create_errhandler);

extern "C" int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  constexpr std::string_view kFunction = "MPI_File_set_errhandler";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (file != MPI_FILE_NULL) {
    if (int rc = check_file(file, kFunction); rc != MPI_SUCCESS) return rc;
  }
  if (errhandler == MPI_ERRHANDLER_NULL) {
    return raise(file, kFunction, MPI_ERR_ARG,
                 "errhandler = MPI_ERRHANDLER_NULL, expected an error handler");
  }
  if (file == MPI_FILE_NULL) {
    weft::mpi::io::set_default_errhandler(errhandler);
  } else {
    file->errhandler = errhandler;
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_set_errhandler);

extern "C" int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  constexpr std::string_view kFunction = "MPI_File_get_errhandler";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (file != MPI_FILE_NULL) {
    if (int rc = check_file(file, kFunction); rc != MPI_SUCCESS) return rc;
  }
  if (errhandler == nullptr) {
    return raise(file, kFunction, MPI_ERR_ARG,
                 "errhandler = NULL, expected where to store the handler");
  }
  *errhandler = file == MPI_FILE_NULL ? weft::mpi::io::default_errhandler() : file->errhandler;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_errhandler);

extern "C" int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
  constexpr std::string_view kFunction = "MPI_File_call_errhandler";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (fh != MPI_FILE_NULL) {
    if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  }
  raise(fh, kFunction, errorcode, "raised by the program");
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_call_errhandler);
