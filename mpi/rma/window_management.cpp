// What a window carries besides its memory (MPI-4.1 12.2.6-12.2.7, 9.3.2): its attributes,
// name, group, error handler and info.
#include <algorithm>
#include <cstring>
#include <string>

#include "errhan/errhandler.h"
#include "errhan/error.h"
#include "info/info.h"
#include "rma/hints.h"
#include "rma/window.h"
#include "rma/window_error.h"
#include "util/profiling.h"

using weft::mpi::rma::check_win;
using weft::mpi::rma::raise;

extern "C" int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  if (int rc = check_win(win, "MPI_Win_get_attr"); rc != MPI_SUCCESS) return rc;
  if (attribute_val == nullptr || flag == nullptr) {
    return raise(win, "MPI_Win_get_attr", MPI_ERR_ARG,
                 "attribute_val or flag is NULL, expected where to store the attribute");
  }
  void* value = nullptr;
  switch (win_keyval) {
    case MPI_WIN_BASE:
      value = win->base;
      break;
    case MPI_WIN_SIZE:
      value = &win->size_attribute;
      break;
    case MPI_WIN_DISP_UNIT:
      value = &win->disp_unit_attribute;
      break;
    case MPI_WIN_CREATE_FLAVOR:
      value = &win->flavor_attribute;
      break;
    case MPI_WIN_MODEL:
      value = &win->model_attribute;
      break;
    default:
      return raise(win, "MPI_Win_get_attr", MPI_ERR_KEYVAL,
                   "win_keyval = " + std::to_string(win_keyval) +
                       ", expected a window keyval (MPI_WIN_BASE, MPI_WIN_SIZE, "
                       "MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR or MPI_WIN_MODEL)");
  }
  *static_cast<void**>(attribute_val) = value;
  *flag = 1;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_get_attr);

extern "C" int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  if (int rc = check_win(win, "MPI_Win_set_name"); rc != MPI_SUCCESS) return rc;
  if (win_name == nullptr) {
    return raise(win, "MPI_Win_set_name", MPI_ERR_ARG, "win_name = NULL, expected a string");
  }
  win->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_set_name);

extern "C" int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  if (int rc = check_win(win, "MPI_Win_get_name"); rc != MPI_SUCCESS) return rc;
  if (win_name == nullptr || resultlen == nullptr) {
    return raise(win, "MPI_Win_get_name", MPI_ERR_ARG,
                 "win_name or resultlen is NULL, expected where to store the name");
  }
  std::memcpy(win_name, win->name.data(), win->name.size());
  win_name[win->name.size()] = '\0';
  *resultlen = static_cast<int>(win->name.size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_get_name);

extern "C" int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  if (int rc = check_win(win, "MPI_Win_get_group"); rc != MPI_SUCCESS) return rc;
  if (group == nullptr) {
    return raise(win, "MPI_Win_get_group", MPI_ERR_ARG, "group = NULL, expected where to store it");
  }
  return PMPI_Comm_group(win->comm, group);
}
WEFT_MPI_ALIAS(MPI_Win_get_group);

// A window handler is kept under the communicator handler's function type (both take the
// object's handle and the code); window_error.cpp calls it back with its own type.
extern "C" int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                                          MPI_Errhandler* errhandler) {
  if (int rc = weft::mpi::check_initialized("MPI_Win_create_errhandler"); rc != MPI_SUCCESS) {
    return rc;
  }
  if (win_errhandler_fn == nullptr || errhandler == nullptr) {
    return weft::mpi::raise(MPI_COMM_WORLD, "MPI_Win_create_errhandler", MPI_ERR_ARG,
                            win_errhandler_fn == nullptr
                                ? "win_errhandler_fn = NULL, expected a handler function"
                                : "errhandler = NULL, expected where to store the handle");
  }
  *errhandler =
      new weft_mpi_errhandler{reinterpret_cast<MPI_Comm_errhandler_function*>(win_errhandler_fn)};
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_create_errhandler);

extern "C" int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  if (int rc = check_win(win, "MPI_Win_set_errhandler"); rc != MPI_SUCCESS) return rc;
  if (errhandler == MPI_ERRHANDLER_NULL) {
    return raise(win, "MPI_Win_set_errhandler", MPI_ERR_ARG,
                 "errhandler = MPI_ERRHANDLER_NULL, expected an error handler");
  }
  win->errhandler = errhandler;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_set_errhandler);

extern "C" int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  if (int rc = check_win(win, "MPI_Win_get_errhandler"); rc != MPI_SUCCESS) return rc;
  if (errhandler == nullptr) {
    return raise(win, "MPI_Win_get_errhandler", MPI_ERR_ARG,
                 "errhandler = NULL, expected where to store the handler");
  }
  *errhandler = win->errhandler;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_get_errhandler);

extern "C" int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  if (int rc = check_win(win, "MPI_Win_call_errhandler"); rc != MPI_SUCCESS) return rc;
  raise(win, "MPI_Win_call_errhandler", errorcode, "raised by the program");
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_call_errhandler);

extern "C" int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  if (int rc = check_win(win, "MPI_Win_set_info"); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::rma::check_hints(win->comm, "MPI_Win_set_info", info);
      rc != MPI_SUCCESS) {
    return rc;
  }
  weft::mpi::rma::set_hints(*win, info);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_set_info);

extern "C" int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  if (int rc = check_win(win, "MPI_Win_get_info"); rc != MPI_SUCCESS) return rc;
  if (info_used == nullptr) {
    return raise(win, "MPI_Win_get_info", MPI_ERR_ARG,
                 "info_used = NULL, expected where to store the info");
  }
  *info_used = new weft_mpi_info{win->info};
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_get_info);
