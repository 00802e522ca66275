// Attributes on datatypes: MPI_Type_create_keyval, _free_keyval, _set_attr, _get_attr,
// _delete_attr, and the parts of MPI_Type_dup and MPI_Type_free.
#include "attr/datatype_attributes.h"

#include <mutex>
#include <string>

#include "errhan/error.h"
#include "init/world.h"
#include "util/profiling.h"

namespace weft::mpi {

AttributeSet& DatatypeAttributes::of(MPI_Datatype type) {
  std::lock_guard guard(lock_);
  std::unique_ptr<AttributeSet>& set = sets_[type];
  if (!set) set = std::make_unique<AttributeSet>();
  return *set;
}

AttributeSet* DatatypeAttributes::find(MPI_Datatype type) {
  std::lock_guard guard(lock_);
  const auto it = sets_.find(type);
  return it == sets_.end() ? nullptr : it->second.get();
}

void DatatypeAttributes::forget(MPI_Datatype type) {
  std::unique_ptr<AttributeSet> set;  // destroyed outside the lock
  std::lock_guard guard(lock_);
  if (const auto it = sets_.find(type); it != sets_.end()) {
    set = std::move(it->second);
    sets_.erase(it);
  }
}

namespace {

DatatypeAttributes& table() {
  return caller_state().type_attributes;
}

// The caller's table, or null for a thread of no rank: datatypes may be made, duplicated and
// freed before MPI_Init and outside any job (MPI-4.1 11.2.1), and such a thread set no attributes.
DatatypeAttributes* table_if_any() {
  return world() != nullptr && caller_world_rank() >= 0 ? &table() : nullptr;
}

// Datatype errors belong to no communicator: MPI_COMM_WORLD's handler (MPI-3.1 8.3).
int raise_outcome(std::string_view function, const Outcome& outcome) {
  return raise(MPI_COMM_WORLD, function, outcome.code, outcome.detail);
}

int check_type(std::string_view function, MPI_Datatype type) {
  if (type != MPI_DATATYPE_NULL) return MPI_SUCCESS;
  return raise(MPI_COMM_WORLD, function, MPI_ERR_TYPE,
               "datatype = MPI_DATATYPE_NULL, expected a datatype");
}

}  // namespace

int copy_type_attributes(MPI_Datatype oldtype, MPI_Datatype newtype, std::string_view function) {
  if (table_if_any() == nullptr) return MPI_SUCCESS;
  AttributeSet* from = table().find(oldtype);
  if (from == nullptr) return MPI_SUCCESS;
  const Outcome o = copy_attributes(*from, oldtype, table().of(newtype), newtype);
  if (o.ok()) return MPI_SUCCESS;
  table().forget(newtype);
  return raise_outcome(function, o);
}

int delete_type_attributes(MPI_Datatype type, std::string_view function) {
  if (table_if_any() == nullptr) return MPI_SUCCESS;
  AttributeSet* set = table().find(type);
  if (set == nullptr) return MPI_SUCCESS;
  if (Outcome o = delete_attributes(*set, type); !o.ok()) return raise_outcome(function, o);
  table().forget(type);
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

using weft::mpi::check_initialized;
using weft::mpi::Outcome;

extern "C" int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                                       MPI_Type_delete_attr_function* type_delete_attr_fn,
                                       int* type_keyval, void* extra_state) {
  constexpr std::string_view kFunction = "MPI_Type_create_keyval";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  const Outcome o = weft::mpi::create_keyval<MPI_Datatype>(type_copy_attr_fn, type_delete_attr_fn,
                                                           type_keyval, extra_state);
  return o.ok() ? MPI_SUCCESS : weft::mpi::raise_outcome(kFunction, o);
}
WEFT_MPI_ALIAS(MPI_Type_create_keyval);

extern "C" int PMPI_Type_free_keyval(int* type_keyval) {
  constexpr std::string_view kFunction = "MPI_Type_free_keyval";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  const Outcome o = weft::mpi::free_keyval<MPI_Datatype>(type_keyval);
  return o.ok() ? MPI_SUCCESS : weft::mpi::raise_outcome(kFunction, o);
}
WEFT_MPI_ALIAS(MPI_Type_free_keyval);

namespace {

int type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val,
                  weft::mpi::AttributeLanguage writer) {
  constexpr std::string_view kFunction = "MPI_Type_set_attr";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_type(kFunction, datatype); rc != MPI_SUCCESS) return rc;
  const Outcome o = weft::mpi::set_attribute(weft::mpi::table().of(datatype), datatype, type_keyval,
                                             attribute_val, writer);
  return o.ok() ? MPI_SUCCESS : weft::mpi::raise_outcome(kFunction, o);
}

int type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag,
                  weft::mpi::AttributeLanguage reader) {
  constexpr std::string_view kFunction = "MPI_Type_get_attr";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_type(kFunction, datatype); rc != MPI_SUCCESS) return rc;
  static const weft::mpi::AttributeSet kNone;
  const weft::mpi::AttributeSet* set = weft::mpi::table().find(datatype);
  const Outcome o = weft::mpi::get_attribute<MPI_Datatype>(
      set != nullptr ? *set : kNone, type_keyval, attribute_val, flag, reader);
  return o.ok() ? MPI_SUCCESS : weft::mpi::raise_outcome(kFunction, o);
}

}  // namespace

extern "C" int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  return type_set_attr(datatype, type_keyval, attribute_val, weft::mpi::AttributeLanguage::c);
}
WEFT_MPI_ALIAS(MPI_Type_set_attr);

extern "C" int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val,
                                  int* flag) {
  return type_get_attr(datatype, type_keyval, attribute_val, flag, weft::mpi::AttributeLanguage::c);
}
WEFT_MPI_ALIAS(MPI_Type_get_attr);

// The Fortran forms' (mpi/fortran/custom_bindings.c); see AttributeLanguage.
extern "C" int weft_mpi_type_set_attr_fortran(MPI_Datatype datatype, int type_keyval,
                                              void* attribute_val) {
  return type_set_attr(datatype, type_keyval, attribute_val, weft::mpi::AttributeLanguage::fortran);
}

extern "C" int weft_mpi_type_get_attr_fortran(MPI_Datatype datatype, int type_keyval,
                                              void* attribute_val, int* flag) {
  return type_get_attr(datatype, type_keyval, attribute_val, flag,
                       weft::mpi::AttributeLanguage::fortran);
}

extern "C" int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  constexpr std::string_view kFunction = "MPI_Type_delete_attr";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_type(kFunction, datatype); rc != MPI_SUCCESS) return rc;
  const Outcome o =
      weft::mpi::delete_attribute(weft::mpi::table().of(datatype), datatype, type_keyval);
  return o.ok() ? MPI_SUCCESS : weft::mpi::raise_outcome(kFunction, o);
}
WEFT_MPI_ALIAS(MPI_Type_delete_attr);
