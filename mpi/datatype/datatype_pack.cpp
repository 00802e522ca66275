// MPI_Pack, MPI_Unpack, MPI_Pack_size (MPI-3.1 4.2) and the address functions (4.1.5, 4.1.12).
// The packed form is the type's data in type-map order, nothing more: ranks of a process share
// one data representation.
#include <climits>
#include <cstdint>
#include <string>

#include "datatype/datatype.h"
#include "datatype/datatype_checks.h"
#include "util/profiling.h"

namespace checks = weft::mpi::datatype_checks;

namespace {

// What Pack and Unpack share: the communicator, the typed side and the packed side's position.
int check_pack(std::string_view function, MPI_Comm comm, std::string_view typed_name,
               const void* typed, int count, MPI_Datatype datatype, std::string_view packed_name,
               const void* packed, int packed_size, const int* position) {
  if (int rc = weft::mpi::check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_count(comm, function,
                                      typed_name == "inbuf" ? "incount" : "outcount", count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_datatype(comm, function, "datatype", datatype); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_buffer(comm, function, typed_name, typed, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const std::string size_name = packed_name == "outbuf" ? "outsize" : "insize";
  if (packed_size < 0) {
    return weft::mpi::raise(comm, function, MPI_ERR_ARG,
                            size_name + " = " + std::to_string(packed_size) + ", expected >= 0");
  }
  if (position == nullptr) {
    return weft::mpi::raise(comm, function, MPI_ERR_ARG, "position = NULL, expected a pointer");
  }
  if (*position < 0 || *position > packed_size) {
    return weft::mpi::raise(comm, function, MPI_ERR_ARG,
                            "*position = " + std::to_string(*position) + ", expected 0.." +
                                std::to_string(packed_size) + " (" + size_name + ")");
  }
  const auto bytes = static_cast<long long>(count) * static_cast<long long>(datatype->size());
  if (bytes > packed_size - *position) {
    return weft::mpi::raise(comm, function, MPI_ERR_TRUNCATE,
                            std::to_string(count) + " elements of the datatype take " +
                                std::to_string(bytes) + " bytes, expected at most " + size_name +
                                " - *position = " + std::to_string(packed_size - *position));
  }
  if (bytes > 0 && packed == nullptr) {
    return weft::mpi::raise(
        comm, function, MPI_ERR_BUFFER,
        std::string(packed_name) + " = NULL, expected a buffer of " + size_name + " bytes");
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                         int outsize, int* position, MPI_Comm comm) {
  if (int rc = check_pack("MPI_Pack", comm, "inbuf", inbuf, incount, datatype, "outbuf", outbuf,
                          outsize, position);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const std::size_t bytes = static_cast<std::size_t>(incount) * datatype->size();
  if (bytes == 0) return MPI_SUCCESS;
  weft::mpi::pack(inbuf, static_cast<std::size_t>(incount), *datatype,
                  static_cast<char*>(outbuf) + *position);
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Pack);

extern "C" int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                           MPI_Datatype datatype, MPI_Comm comm) {
  if (int rc = check_pack("MPI_Unpack", comm, "outbuf", outbuf, outcount, datatype, "inbuf", inbuf,
                          insize, position);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const std::size_t bytes = static_cast<std::size_t>(outcount) * datatype->size();
  if (bytes == 0) return MPI_SUCCESS;
  weft::mpi::unpack(static_cast<const char*>(inbuf) + *position, bytes, outbuf,
                    static_cast<std::size_t>(outcount), *datatype);
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Unpack);

extern "C" int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  constexpr std::string_view kFunction = "MPI_Pack_size";
  if (int rc = weft::mpi::check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_count(comm, kFunction, "incount", incount); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_datatype(comm, kFunction, "datatype", datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (size == nullptr) {
    return weft::mpi::raise(comm, kFunction, MPI_ERR_ARG, "size = NULL, expected a pointer");
  }
  const auto bytes = static_cast<long long>(incount) * static_cast<long long>(datatype->size());
  if (bytes > INT_MAX) {
    return weft::mpi::raise(comm, kFunction, MPI_ERR_COUNT,
                            std::to_string(incount) + " elements take " + std::to_string(bytes) +
                                " bytes, expected a packed size that fits an int");
  }
  *size = static_cast<int>(bytes);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Pack_size);

extern "C" int PMPI_Get_address(const void* location, MPI_Aint* address) {
  if (int rc = checks::pointer("MPI_Get_address", "address", address); rc != MPI_SUCCESS) {
    return rc;
  }
  *address = static_cast<MPI_Aint>(reinterpret_cast<std::uintptr_t>(location));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Get_address);

// Unsigned arithmetic: addresses may wrap past the sign bit without undefined behaviour.
extern "C" MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) +
                               static_cast<std::uintptr_t>(disp));
}
WEFT_MPI_ALIAS(MPI_Aint_add);

extern "C" MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) -
                               static_cast<std::uintptr_t>(addr2));
}
WEFT_MPI_ALIAS(MPI_Aint_diff);
