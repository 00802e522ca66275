// MPI_Alloc_mem and MPI_Free_mem (MPI-4.1 9.2). Memory is cache-line aligned at least, so that
// two ranks' buffers never share a line; the info hint "mpi_minimum_memory_alignment" (MPI-4.1)
// asks for more. Single-copy transfers need nothing special from it: any memory works for them.
#include <cstdlib>
#include <string>
#include <string_view>

#include "errhan/error.h"
#include "info/info.h"
#include "util/profiling.h"

namespace {

constexpr std::size_t kCacheLine = 64;

// The alignment the info asks for, when it is a power of two; other values are ignored, as
// hints may be.
std::size_t alignment_hint(MPI_Info info) {
  if (info == MPI_INFO_NULL || info == MPI_INFO_ENV) return kCacheLine;
  for (const auto& [key, value] : info->entries) {
    if (key != "mpi_minimum_memory_alignment") continue;
    char* end = nullptr;
    const unsigned long long requested = std::strtoull(value.c_str(), &end, 10);
    const bool power_of_two = requested != 0 && (requested & (requested - 1)) == 0;
    if (end != value.c_str() && *end == '\0' && power_of_two && requested > kCacheLine) {
      return static_cast<std::size_t>(requested);
    }
  }
  return kCacheLine;
}

}  // namespace

// baseptr is really a void**: where the address goes.
extern "C" int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  constexpr std::string_view kFunction = "MPI_Alloc_mem";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (size < 0) {
    return weft::mpi::raise(MPI_COMM_WORLD, kFunction, MPI_ERR_ARG,
                            "size = " + std::to_string(size) + ", expected >= 0");
  }
  if (baseptr == nullptr) {
    return weft::mpi::raise(MPI_COMM_WORLD, kFunction, MPI_ERR_ARG,
                            "baseptr = NULL, expected where to store the address");
  }
  const std::size_t alignment = alignment_hint(info);
  void* memory = nullptr;
  // A zero size still gets a distinct address that MPI_Free_mem takes back.
  if (::posix_memalign(&memory, alignment, size > 0 ? static_cast<std::size_t>(size) : 1) != 0) {
    return weft::mpi::raise(MPI_COMM_WORLD, kFunction, MPI_ERR_NO_MEM,
                            "size = " + std::to_string(size) + " bytes aligned to " +
                                std::to_string(alignment) + ": out of memory");
  }
  *static_cast<void**>(baseptr) = memory;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Alloc_mem);

extern "C" int PMPI_Free_mem(void* base) {
  if (int rc = weft::mpi::check_initialized("MPI_Free_mem"); rc != MPI_SUCCESS) return rc;
  std::free(base);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Free_mem);
