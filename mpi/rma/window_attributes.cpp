// Attributes on windows (MPI-4.1 7.7, 12.2.6): the predefined ones, answered from the window,
// and the program's keyvals, kept in the window's AttributeSet (attr/attribute_set.h). A window
// handle is its rank's own, so one set per handle is one per MPI process.
#include <string_view>

#include "attr/attribute_set.h"
#include "errhan/error.h"
#include "rma/window.h"
#include "rma/window_error.h"
#include "util/profiling.h"

using weft::mpi::Outcome;
using weft::mpi::rma::check_win;
using weft::mpi::rma::raise;

extern "C" int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                                      MPI_Win_delete_attr_function* win_delete_attr_fn,
                                      int* win_keyval, void* extra_state) {
  constexpr std::string_view kFunction = "MPI_Win_create_keyval";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  const Outcome o = weft::mpi::create_keyval<MPI_Win>(win_copy_attr_fn, win_delete_attr_fn,
                                                      win_keyval, extra_state);
  return o.ok() ? MPI_SUCCESS : weft::mpi::raise(MPI_COMM_WORLD, kFunction, o.code, o.detail);
}
WEFT_MPI_ALIAS(MPI_Win_create_keyval);

extern "C" int PMPI_Win_free_keyval(int* win_keyval) {
  constexpr std::string_view kFunction = "MPI_Win_free_keyval";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  const Outcome o = weft::mpi::free_keyval<MPI_Win>(win_keyval);
  return o.ok() ? MPI_SUCCESS : weft::mpi::raise(MPI_COMM_WORLD, kFunction, o.code, o.detail);
}
WEFT_MPI_ALIAS(MPI_Win_free_keyval);

namespace {

int win_set_attr(MPI_Win win, int win_keyval, void* attribute_val,
                 weft::mpi::AttributeLanguage writer) {
  constexpr std::string_view kFunction = "MPI_Win_set_attr";
  if (int rc = check_win(win, kFunction); rc != MPI_SUCCESS) return rc;
  const Outcome o =
      weft::mpi::set_attribute<MPI_Win>(win->attributes, win, win_keyval, attribute_val, writer);
  return o.ok() ? MPI_SUCCESS : raise(win, kFunction, o.code, o.detail);
}

int win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag,
                 weft::mpi::AttributeLanguage reader) {
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
    default: {
      const weft::mpi::Outcome o = weft::mpi::get_attribute<MPI_Win>(win->attributes, win_keyval,
                                                                     attribute_val, flag, reader);
      return o.ok() ? MPI_SUCCESS : raise(win, "MPI_Win_get_attr", o.code, o.detail);
    }
  }
  *static_cast<void**>(attribute_val) = value;
  *flag = 1;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  return win_set_attr(win, win_keyval, attribute_val, weft::mpi::AttributeLanguage::c);
}
WEFT_MPI_ALIAS(MPI_Win_set_attr);

extern "C" int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  return win_get_attr(win, win_keyval, attribute_val, flag, weft::mpi::AttributeLanguage::c);
}
WEFT_MPI_ALIAS(MPI_Win_get_attr);

// The Fortran forms' (mpi/fortran/custom_bindings.c); see AttributeLanguage.
extern "C" int weft_mpi_win_set_attr_fortran(MPI_Win win, int win_keyval, void* attribute_val) {
  return win_set_attr(win, win_keyval, attribute_val, weft::mpi::AttributeLanguage::fortran);
}

extern "C" int weft_mpi_win_get_attr_fortran(MPI_Win win, int win_keyval, void* attribute_val,
                                             int* flag) {
  return win_get_attr(win, win_keyval, attribute_val, flag, weft::mpi::AttributeLanguage::fortran);
}

extern "C" int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  constexpr std::string_view kFunction = "MPI_Win_delete_attr";
  if (int rc = check_win(win, kFunction); rc != MPI_SUCCESS) return rc;
  const Outcome o = weft::mpi::delete_attribute<MPI_Win>(win->attributes, win, win_keyval);
  return o.ok() ? MPI_SUCCESS : raise(win, kFunction, o.code, o.detail);
}
WEFT_MPI_ALIAS(MPI_Win_delete_attr);
