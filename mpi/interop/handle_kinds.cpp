// The handle kinds of weft and their Fortran integers: MPI_<Name>_c2f and MPI_<Name>_f2c
// (MPI-4.1 19.3.4). Each kind is one table: the list of its predefined objects, whose positions
// (from 1) are their Fortran integers, and one line in WEFT_HANDLE_KINDS. mpi/fortran/generate.py
// reads the lists to name those integers in mpif.h and the modules, so a predefined object added
// to a kind goes at the end of its list (the integers of the others stay).
#include "interop/handle_kinds.h"

#include <array>

#include "init/world.h"
#include "mpi.h"
#include "util/profiling.h"

namespace weft::mpi::interop {
namespace {

std::array comm_predefined{static_cast<void*>(&weft_mpi_comm_world),
                           static_cast<void*>(&weft_mpi_comm_self)};
std::array group_predefined{static_cast<void*>(&weft_mpi_group_empty)};
std::array datatype_predefined{
    static_cast<void*>(&weft_mpi_char),
    static_cast<void*>(&weft_mpi_short),
    static_cast<void*>(&weft_mpi_int),
    static_cast<void*>(&weft_mpi_long),
    static_cast<void*>(&weft_mpi_long_long),
    static_cast<void*>(&weft_mpi_signed_char),
    static_cast<void*>(&weft_mpi_unsigned_char),
    static_cast<void*>(&weft_mpi_unsigned_short),
    static_cast<void*>(&weft_mpi_unsigned),
    static_cast<void*>(&weft_mpi_unsigned_long),
    static_cast<void*>(&weft_mpi_unsigned_long_long),
    static_cast<void*>(&weft_mpi_float),
    static_cast<void*>(&weft_mpi_double),
    static_cast<void*>(&weft_mpi_long_double),
    static_cast<void*>(&weft_mpi_wchar),
    static_cast<void*>(&weft_mpi_c_bool),
    static_cast<void*>(&weft_mpi_int8_t),
    static_cast<void*>(&weft_mpi_int16_t),
    static_cast<void*>(&weft_mpi_int32_t),
    static_cast<void*>(&weft_mpi_int64_t),
    static_cast<void*>(&weft_mpi_uint8_t),
    static_cast<void*>(&weft_mpi_uint16_t),
    static_cast<void*>(&weft_mpi_uint32_t),
    static_cast<void*>(&weft_mpi_uint64_t),
    static_cast<void*>(&weft_mpi_aint),
    static_cast<void*>(&weft_mpi_count),
    static_cast<void*>(&weft_mpi_offset),
    static_cast<void*>(&weft_mpi_c_float_complex),
    static_cast<void*>(&weft_mpi_c_double_complex),
    static_cast<void*>(&weft_mpi_c_long_double_complex),
    static_cast<void*>(&weft_mpi_cxx_bool),
    static_cast<void*>(&weft_mpi_cxx_float_complex),
    static_cast<void*>(&weft_mpi_cxx_double_complex),
    static_cast<void*>(&weft_mpi_cxx_long_double_complex),
    static_cast<void*>(&weft_mpi_byte),
    static_cast<void*>(&weft_mpi_packed),
    static_cast<void*>(&weft_mpi_float_int),
    static_cast<void*>(&weft_mpi_double_int),
    static_cast<void*>(&weft_mpi_long_int),
    static_cast<void*>(&weft_mpi_2int),
    static_cast<void*>(&weft_mpi_short_int),
    static_cast<void*>(&weft_mpi_long_double_int),
    static_cast<void*>(&weft_mpi_character),
    static_cast<void*>(&weft_mpi_logical),
    static_cast<void*>(&weft_mpi_integer),
    static_cast<void*>(&weft_mpi_real),
    static_cast<void*>(&weft_mpi_double_precision),
    static_cast<void*>(&weft_mpi_complex),
    static_cast<void*>(&weft_mpi_double_complex),
    static_cast<void*>(&weft_mpi_integer1),
    static_cast<void*>(&weft_mpi_integer2),
    static_cast<void*>(&weft_mpi_integer4),
    static_cast<void*>(&weft_mpi_integer8),
    static_cast<void*>(&weft_mpi_real4),
    static_cast<void*>(&weft_mpi_real8),
    static_cast<void*>(&weft_mpi_complex8),
    static_cast<void*>(&weft_mpi_complex16),
    static_cast<void*>(&weft_mpi_real16),
    static_cast<void*>(&weft_mpi_complex32),
    static_cast<void*>(&weft_mpi_2integer),
    static_cast<void*>(&weft_mpi_2real),
    static_cast<void*>(&weft_mpi_2double_precision),
    static_cast<void*>(&weft_mpi_integer16),
};
std::array op_predefined{
    static_cast<void*>(&weft_mpi_max),     static_cast<void*>(&weft_mpi_min),
    static_cast<void*>(&weft_mpi_sum),     static_cast<void*>(&weft_mpi_prod),
    static_cast<void*>(&weft_mpi_land),    static_cast<void*>(&weft_mpi_band),
    static_cast<void*>(&weft_mpi_lor),     static_cast<void*>(&weft_mpi_bor),
    static_cast<void*>(&weft_mpi_lxor),    static_cast<void*>(&weft_mpi_bxor),
    static_cast<void*>(&weft_mpi_maxloc),  static_cast<void*>(&weft_mpi_minloc),
    static_cast<void*>(&weft_mpi_replace), static_cast<void*>(&weft_mpi_no_op),
};
std::array<void*, 0> no_predefined{};
std::array message_predefined{static_cast<void*>(&weft_mpi_message_no_proc)};
std::array errhandler_predefined{static_cast<void*>(&weft_mpi_errors_are_fatal),
                                 static_cast<void*>(&weft_mpi_errors_return),
                                 static_cast<void*>(&weft_mpi_errors_abort)};
std::array info_predefined{static_cast<void*>(&weft_mpi_info_env)};

}  // namespace

// Function-local statics: a conversion may come from another library's static constructor.
#define WEFT_HANDLE_KIND(Name, Type, kind, predefined) \
  HandleTable<MPI_##Type>& kind##_handles() {          \
    static HandleTable<MPI_##Type> table{predefined};  \
    return table;                                      \
  }
WEFT_HANDLE_KINDS(WEFT_HANDLE_KIND)
#undef WEFT_HANDLE_KIND

}  // namespace weft::mpi::interop

using namespace weft::mpi::interop;

namespace {

// A spawned rank's MPI_COMM_WORLD and MPI_COMM_SELF are objects of its world, not the job's
// (docs/mpi-spawn.md): Fortran's integers for them, 1 and 2, name the caller's. Other kinds'
// predefined objects are the same for every world.
template <class Handle>
Handle callers(Handle handle) {
  return handle;
}
MPI_Comm callers(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return weft::mpi::caller_world_comm();
  if (comm == MPI_COMM_SELF) return weft::mpi::caller_self_comm();
  return comm;
}
template <class Handle>
Handle jobs(Handle handle) {
  return handle;
}
MPI_Comm jobs(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF || comm == MPI_COMM_NULL) return comm;
  if (comm == weft::mpi::caller_world_comm()) return MPI_COMM_WORLD;
  if (comm == weft::mpi::caller_self_comm()) return MPI_COMM_SELF;
  return comm;
}

}  // namespace

// The C entry points of every kind; a macro because their names are made from the kind's.
#define WEFT_HANDLE_KIND(Name, Type, kind, predefined)              \
  extern "C" MPI_Fint PMPI_##Name##_c2f(MPI_##Type handle) {        \
    return kind##_handles().to_fortran(jobs(handle));               \
  }                                                                 \
  WEFT_MPI_ALIAS(MPI_##Name##_c2f);                                 \
  extern "C" MPI_##Type PMPI_##Name##_f2c(MPI_Fint handle) {        \
    return callers(kind##_handles().from_fortran(handle));          \
  }                                                                 \
  WEFT_MPI_ALIAS(MPI_##Name##_f2c);                                 \
  extern "C" void weft_mpi_##kind##_fortran_free(MPI_Fint handle) { \
    kind##_handles().take_back(handle);                             \
  }
WEFT_HANDLE_KINDS(WEFT_HANDLE_KIND)
#undef WEFT_HANDLE_KIND
