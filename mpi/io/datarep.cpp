#include "io/datarep.h"

#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>

#include "datatype/datatype.h"
#include "errhan/error.h"
#include "init/world.h"
#include "io/file_error.h"
#include "util/profiling.h"

namespace weft::mpi::io {
namespace {

struct Registered {
  MPI_Datarep_conversion_function* read = nullptr;
  MPI_Datarep_conversion_function* write = nullptr;
  MPI_Datarep_conversion_function_c* read_c = nullptr;
  MPI_Datarep_conversion_function_c* write_c = nullptr;
  MPI_Datarep_extent_function* extent = nullptr;
  void* extra_state = nullptr;
};

// Registered representations, by world rank and name: a rank is a process to the program, and
// every rank of a process registers the same name (MPI_Register_datarep is called by each).
std::mutex registry_lock;
std::map<std::pair<int, std::string>, Registered>& registry() {
  static std::map<std::pair<int, std::string>, Registered> entries;
  return entries;
}

bool native(const std::string& datarep) {
  return datarep == "native" || datarep == "internal";
}

const Registered* find(const std::string& datarep) {
  std::lock_guard lock(registry_lock);
  auto it = registry().find({caller_world_rank(), datarep});
  return it == registry().end() ? nullptr : &it->second;
}

int register_datarep(const char* datarep, Registered entry) {
  constexpr std::string_view kFunction = "MPI_Register_datarep";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (datarep == nullptr || datarep[0] == '\0' || std::strlen(datarep) >= MPI_MAX_DATAREP_STRING) {
    return raise(MPI_FILE_NULL, kFunction, MPI_ERR_ARG,
                 "datarep is empty, NULL or longer than MPI_MAX_DATAREP_STRING - 1");
  }
  if (entry.extent == nullptr) {
    return raise(MPI_FILE_NULL, kFunction, MPI_ERR_ARG,
                 "dtype_file_extent_fn = NULL, expected the file extent function");
  }
  const std::string name(datarep);
  std::lock_guard lock(registry_lock);
  const std::pair<int, std::string> key{caller_world_rank(), name};
  if (native(name) || name == "external32" || registry().count(key) != 0) {
    return raise(MPI_FILE_NULL, kFunction, MPI_ERR_DUP_DATAREP,
                 "datarep \"" + name + "\" is already defined");
  }
  registry()[key] = entry;
  return MPI_SUCCESS;
}

}  // namespace

int file_extent(const std::string& datarep, MPI_Datatype datatype, MPI_Aint& extent) {
  if (native(datarep)) {
    extent = datatype->extent();
    return MPI_SUCCESS;
  }
  if (datarep == "external32") {
    MPI_Aint size = 0;
    if (int rc = PMPI_Pack_external_size("external32", 1, datatype, &size); rc != MPI_SUCCESS) {
      return rc;
    }
    // A type's external extent: its native extent with each value at its external size.
    extent = datatype->extent() - static_cast<MPI_Aint>(datatype->size()) + size;
    return MPI_SUCCESS;
  }
  const Registered* entry = find(datarep);
  if (entry == nullptr) return MPI_ERR_UNSUPPORTED_DATAREP;
  return entry->extent(datatype, &extent, entry->extra_state);
}

int check_datarep(const std::string& datarep, MPI_Datatype type, std::string& detail) {
  if (native(datarep)) return MPI_SUCCESS;
  if (datarep != "external32" && find(datarep) == nullptr) {
    detail = "datarep = \"" + datarep +
             "\", expected native, internal, external32 or one made by MPI_Register_datarep";
    return MPI_ERR_UNSUPPORTED_DATAREP;
  }
  // The basic values of a type keep their size in the file: compare one element's.
  MPI_Aint extent = 0;
  const weft_mpi_datatype* unit = type->basic() != nullptr ? type->basic() : type;
  if (!unit->predefined() && datarep != "external32") {
    detail = "datarep \"" + datarep + "\" with a datatype that mixes several basic types";
    return MPI_ERR_UNSUPPORTED_DATAREP;
  }
  auto* unit_handle = const_cast<MPI_Datatype>(unit);
  if (datarep == "external32") {
    MPI_Aint size = 0;
    if (PMPI_Pack_external_size("external32", 1, type, &size) != MPI_SUCCESS ||
        static_cast<std::size_t>(size) != type->size()) {
      detail =
          "the view's types take another size in external32 than in memory, which weft's "
          "views do not convert";
      return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    return MPI_SUCCESS;
  }
  if (int rc = file_extent(datarep, unit_handle, extent); rc != MPI_SUCCESS) {
    detail = "the extent function of datarep \"" + datarep + "\" failed";
    return rc;
  }
  if (static_cast<std::size_t>(extent) != unit->size()) {
    detail = "datarep \"" + datarep + "\" gives " + std::string(unit->name()) + " " +
             std::to_string(extent) + " bytes in the file, " + std::to_string(unit->size()) +
             " in memory: weft's views keep the memory sizes";
    return MPI_ERR_UNSUPPORTED_DATAREP;
  }
  return MPI_SUCCESS;
}

int to_file(const std::string& datarep, const void* buffer, std::size_t count,
            MPI_Datatype datatype, std::byte* out, MPI_Offset position) {
  if (datarep == "external32") {
    MPI_Count at = 0;
    return PMPI_Pack_external_c("external32", buffer, static_cast<MPI_Count>(count), datatype, out,
                                static_cast<MPI_Count>(count * datatype->size()), &at);
  }
  const Registered* entry = find(datarep);
  if (entry == nullptr) return MPI_ERR_UNSUPPORTED_DATAREP;
  if (entry->write_c != nullptr) {
    return entry->write_c(const_cast<void*>(buffer), datatype, static_cast<MPI_Count>(count), out,
                          position, entry->extra_state);
  }
  if (entry->write == nullptr) {  // MPI_CONVERSION_FN_NULL: the bytes as they are in memory
    pack(buffer, count, *datatype, out);
    return MPI_SUCCESS;
  }
  return entry->write(const_cast<void*>(buffer), datatype, static_cast<int>(count), out, position,
                      entry->extra_state);
}

int from_file(const std::string& datarep, const std::byte* in, void* buffer, std::size_t count,
              MPI_Datatype datatype, MPI_Offset position) {
  if (datarep == "external32") {
    MPI_Count at = 0;
    return PMPI_Unpack_external_c("external32", in,
                                  static_cast<MPI_Count>(count * datatype->size()), &at, buffer,
                                  static_cast<MPI_Count>(count), datatype);
  }
  const Registered* entry = find(datarep);
  if (entry == nullptr) return MPI_ERR_UNSUPPORTED_DATAREP;
  if (entry->read_c != nullptr) {
    return entry->read_c(buffer, datatype, static_cast<MPI_Count>(count),
                         const_cast<std::byte*>(in), position, entry->extra_state);
  }
  if (entry->read == nullptr) {
    unpack(in, count * datatype->size(), buffer, count, *datatype);
    return MPI_SUCCESS;
  }
  return entry->read(buffer, datatype, static_cast<int>(count), const_cast<std::byte*>(in),
                     position, entry->extra_state);
}

}  // namespace weft::mpi::io

extern "C" int PMPI_Register_datarep(const char* datarep,
                                     MPI_Datarep_conversion_function* read_conversion_fn,
                                     MPI_Datarep_conversion_function* write_conversion_fn,
                                     MPI_Datarep_extent_function* dtype_file_extent_fn,
                                     void* extra_state) {
  return weft::mpi::io::register_datarep(datarep, {read_conversion_fn, write_conversion_fn, nullptr,
                                                   nullptr, dtype_file_extent_fn, extra_state});
}
WEFT_MPI_ALIAS(MPI_Register_datarep);

extern "C" int PMPI_Register_datarep_c(const char* datarep,
                                       MPI_Datarep_conversion_function_c* read_conversion_fn,
                                       MPI_Datarep_conversion_function_c* write_conversion_fn,
                                       MPI_Datarep_extent_function* dtype_file_extent_fn,
                                       void* extra_state) {
  return weft::mpi::io::register_datarep(
      datarep, {nullptr, nullptr, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn,
                extra_state});
}
WEFT_MPI_ALIAS(MPI_Register_datarep_c);
