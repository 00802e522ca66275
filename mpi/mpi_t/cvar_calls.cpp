// The tools interface's initialisation, control variables, enumerations, categories and the
// event queries (MPI-4.1 15.3). Errors are returned, never raised: MPI_T calls have no handler.
#include <algorithm>
#include <cstring>
#include <string>

#include "mpi_t/tools_state.h"
#include "mpi_t/variables.h"
#include "util/profiling.h"

using weft::mpi::tools::copy_string;
using weft::mpi::tools::tables;

struct weft_mpi_t_cvar_handle {
  int index = 0;
};

namespace {

template <class Table>
int check_index(const Table& table, int index) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  return index >= 0 && static_cast<std::size_t>(index) < table.size() ? MPI_SUCCESS
                                                                      : MPI_T_ERR_INVALID_INDEX;
}

template <class Table>
int find_index(const Table& table, const char* name, int* index) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (name == nullptr || index == nullptr) return MPI_T_ERR_INVALID;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].name == name) {
      *index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}

template <class T>
void set(T* out, T value) {
  if (out != nullptr) *out = value;
}

// An enumeration handle is the address of its entry in the tables.
MPI_T_enum enum_handle(int index) {
  if (index < 0) return MPI_T_ENUM_NULL;
  // The handle names the entry; its layout is the Enumeration's.
  return static_cast<MPI_T_enum>(static_cast<void*>(const_cast<weft::mpi::tools::Enumeration*>(
      &tables().enumerations[static_cast<std::size_t>(index)])));
}

const weft::mpi::tools::Enumeration* enumeration_of(MPI_T_enum handle) {
  for (const auto& e : tables().enumerations) {
    if (static_cast<const void*>(&e) == static_cast<const void*>(handle)) return &e;
  }
  return nullptr;
}

int count_out(const std::vector<int>& list, int len, int indices[]) {
  if (len > 0 && indices == nullptr) return MPI_T_ERR_INVALID;
  const std::size_t n = std::min(list.size(), static_cast<std::size_t>(std::max(len, 0)));
  std::copy_n(list.begin(), n, indices);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_T_init_thread(int required, int* provided) {
  if (provided == nullptr || required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) {
    return MPI_T_ERR_INVALID;
  }
  tables();  // built now, so that no later call pays for it
  weft::mpi::tools::enter();
  *provided = required;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_init_thread);

extern "C" int PMPI_T_finalize(void) {
  return weft::mpi::tools::leave() < 0 ? MPI_T_ERR_NOT_INITIALIZED : MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_finalize);

extern "C" int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  const weft::mpi::tools::Enumeration* e = enumeration_of(enumtype);
  if (e == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  set(num, static_cast<int>(e->items.size()));
  copy_string(e->name, name, name_len);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_enum_get_info);

extern "C" int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int* value, char* name,
                                    int* name_len) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  const weft::mpi::tools::Enumeration* e = enumeration_of(enumtype);
  if (e == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (index < 0 || static_cast<std::size_t>(index) >= e->items.size()) {
    return MPI_T_ERR_INVALID_ITEM;
  }
  set(value, index);
  copy_string(e->items[static_cast<std::size_t>(index)], name, name_len);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_enum_get_item);

extern "C" int PMPI_T_cvar_get_num(int* num_cvar) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (num_cvar == nullptr) return MPI_T_ERR_INVALID;
  *num_cvar = static_cast<int>(tables().cvars.size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_cvar_get_num);

extern "C" int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                                    MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc,
                                    int* desc_len, int* bind, int* scope) {
  if (int rc = check_index(tables().cvars, cvar_index); rc != MPI_SUCCESS) return rc;
  const auto& cvar = tables().cvars[static_cast<std::size_t>(cvar_index)];
  copy_string(cvar.name, name, name_len);
  copy_string(cvar.desc, desc, desc_len);
  set(verbosity, cvar.verbosity);
  set(datatype, cvar.datatype);
  set(enumtype, enum_handle(cvar.enumeration));
  set(bind, MPI_T_BIND_NO_OBJECT);
  set(scope, cvar.scope);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_cvar_get_info);

extern "C" int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  return find_index(tables().cvars, name, cvar_index);
}
WEFT_MPI_ALIAS(MPI_T_cvar_get_index);

extern "C" int PMPI_T_cvar_handle_alloc(int cvar_index, void* /*obj_handle*/,
                                        MPI_T_cvar_handle* handle, int* count) {
  if (int rc = check_index(tables().cvars, cvar_index); rc != MPI_SUCCESS) return rc;
  if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
  // No variable is bound to an object: obj_handle is ignored (MPI-4.1 15.3.6).
  *handle = new weft_mpi_t_cvar_handle{cvar_index};
  *count = weft::mpi::tools::cvar_count(cvar_index);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_cvar_handle_alloc);

extern "C" int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (handle == nullptr || *handle == MPI_T_CVAR_HANDLE_NULL) return MPI_T_ERR_INVALID_HANDLE;
  delete *handle;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_cvar_handle_free);

extern "C" int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (handle == MPI_T_CVAR_HANDLE_NULL) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  weft::mpi::tools::read_cvar(handle->index, buf);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_cvar_read);

extern "C" int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (handle == MPI_T_CVAR_HANDLE_NULL) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  return weft::mpi::tools::write_cvar(handle->index, buf);
}
WEFT_MPI_ALIAS(MPI_T_cvar_write);

extern "C" int PMPI_T_category_get_num(int* num_cat) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (num_cat == nullptr) return MPI_T_ERR_INVALID;
  *num_cat = static_cast<int>(tables().categories.size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_category_get_num);

extern "C" int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc,
                                        int* desc_len, int* num_cvars, int* num_pvars,
                                        int* num_categories) {
  if (int rc = check_index(tables().categories, cat_index); rc != MPI_SUCCESS) return rc;
  const auto& category = tables().categories[static_cast<std::size_t>(cat_index)];
  copy_string(category.name, name, name_len);
  copy_string(category.desc, desc, desc_len);
  set(num_cvars, static_cast<int>(category.cvars.size()));
  set(num_pvars, static_cast<int>(category.pvars.size()));
  set(num_categories, 0);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_category_get_info);

extern "C" int PMPI_T_category_get_num_events(int cat_index, int* num_events) {
  if (int rc = check_index(tables().categories, cat_index); rc != MPI_SUCCESS) return rc;
  if (num_events == nullptr) return MPI_T_ERR_INVALID;
  *num_events = 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_category_get_num_events);

extern "C" int PMPI_T_category_get_index(const char* name, int* cat_index) {
  return find_index(tables().categories, name, cat_index);
}
WEFT_MPI_ALIAS(MPI_T_category_get_index);

extern "C" int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  if (int rc = check_index(tables().categories, cat_index); rc != MPI_SUCCESS) return rc;
  return count_out(tables().categories[static_cast<std::size_t>(cat_index)].cvars, len, indices);
}
WEFT_MPI_ALIAS(MPI_T_category_get_cvars);

extern "C" int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  if (int rc = check_index(tables().categories, cat_index); rc != MPI_SUCCESS) return rc;
  return count_out(tables().categories[static_cast<std::size_t>(cat_index)].pvars, len, indices);
}
WEFT_MPI_ALIAS(MPI_T_category_get_pvars);

// weft defines no events (below), so no category holds any, and none nests categories.
extern "C" int PMPI_T_category_get_events(int cat_index, int len, int indices[]) {
  if (int rc = check_index(tables().categories, cat_index); rc != MPI_SUCCESS) return rc;
  return count_out({}, len, indices);
}
WEFT_MPI_ALIAS(MPI_T_category_get_events);

extern "C" int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  if (int rc = check_index(tables().categories, cat_index); rc != MPI_SUCCESS) return rc;
  return count_out({}, len, indices);
}
WEFT_MPI_ALIAS(MPI_T_category_get_categories);

extern "C" int PMPI_T_category_changed(int* update_number) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (update_number == nullptr) return MPI_T_ERR_INVALID;
  *update_number = 0;  // the tables never change once built
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_category_changed);

// Events (MPI-4.1 15.3.8): weft has no event type to offer yet, so it reports none and no
// source of them; a tool asking for one by index or name gets the standard's error.
extern "C" int PMPI_T_source_get_num(int* num_sources) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (num_sources == nullptr) return MPI_T_ERR_INVALID;
  *num_sources = 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_source_get_num);

extern "C" int PMPI_T_source_get_info(int /*source_index*/, char* /*name*/, int* /*name_len*/,
                                      char* /*desc*/, int* /*desc_len*/,
                                      MPI_T_source_order* /*ordering*/,
                                      MPI_Count* /*ticks_per_second*/, MPI_Count* /*max_ticks*/,
                                      MPI_Info* /*info*/) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  return MPI_T_ERR_INVALID_INDEX;
}
WEFT_MPI_ALIAS(MPI_T_source_get_info);

extern "C" int PMPI_T_event_get_num(int* num_events) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (num_events == nullptr) return MPI_T_ERR_INVALID;
  *num_events = 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_event_get_num);

extern "C" int PMPI_T_event_get_info(int /*event_index*/, char* /*name*/, int* /*name_len*/,
                                     int* /*verbosity*/, MPI_Datatype /*array_of_datatypes*/[],
                                     MPI_Aint /*array_of_displacements*/[], int* /*num_elements*/,
                                     MPI_T_enum* /*enumtype*/, MPI_Info* /*info*/, char* /*desc*/,
                                     int* /*desc_len*/, int* /*bind*/) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  return MPI_T_ERR_INVALID_INDEX;
}
WEFT_MPI_ALIAS(MPI_T_event_get_info);

extern "C" int PMPI_T_event_get_index(const char* name, int* event_index) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (name == nullptr || event_index == nullptr) return MPI_T_ERR_INVALID;
  return MPI_T_ERR_INVALID_NAME;
}
WEFT_MPI_ALIAS(MPI_T_event_get_index);
