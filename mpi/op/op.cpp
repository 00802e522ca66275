// The predefined operations and applying any operation to typed data.
#include "op/op.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>

#include "datatype/datatype.h"
#include "datatype/datatype_layout.h"
#include "op/op_kernels.h"

using weft::mpi::OpKind;

weft_mpi_op weft_mpi_max{OpKind::max, nullptr, true, "MPI_MAX"};
weft_mpi_op weft_mpi_min{OpKind::min, nullptr, true, "MPI_MIN"};
weft_mpi_op weft_mpi_sum{OpKind::sum, nullptr, true, "MPI_SUM"};
weft_mpi_op weft_mpi_prod{OpKind::prod, nullptr, true, "MPI_PROD"};
weft_mpi_op weft_mpi_land{OpKind::land, nullptr, true, "MPI_LAND"};
weft_mpi_op weft_mpi_band{OpKind::band, nullptr, true, "MPI_BAND"};
weft_mpi_op weft_mpi_lor{OpKind::lor, nullptr, true, "MPI_LOR"};
weft_mpi_op weft_mpi_bor{OpKind::bor, nullptr, true, "MPI_BOR"};
weft_mpi_op weft_mpi_lxor{OpKind::lxor, nullptr, true, "MPI_LXOR"};
weft_mpi_op weft_mpi_bxor{OpKind::bxor, nullptr, true, "MPI_BXOR"};
weft_mpi_op weft_mpi_maxloc{OpKind::maxloc, nullptr, true, "MPI_MAXLOC"};
weft_mpi_op weft_mpi_minloc{OpKind::minloc, nullptr, true, "MPI_MINLOC"};
weft_mpi_op weft_mpi_replace{OpKind::replace, nullptr, false, "MPI_REPLACE"};
weft_mpi_op weft_mpi_no_op{OpKind::no_op, nullptr, false, "MPI_NO_OP"};

namespace weft::mpi {
namespace {

char* at(const void* base, MPI_Aint displacement) {
  return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(base) +
                                 static_cast<std::uintptr_t>(displacement));
}

// A buffer of `n` units of a predefined type, aligned for its C type.
struct Scratch {
  Scratch(const Datatype& unit, std::size_t n)
      : align(unit.layout->alignment),
        data(static_cast<char*>(
            ::operator new(n* static_cast<std::size_t>(unit.extent()), std::align_val_t(align)))) {}
  ~Scratch() { ::operator delete(data, std::align_val_t(align)); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  std::size_t align;
  char* data;
};

// The kernel on `n` units at `in` and `inout`, through aligned copies when either is misaligned
// (a struct type may place its members anywhere).
void run_units(OpKind kind, const Datatype& unit, const void* in, void* inout, std::size_t n) {
  const TypeCode code = unit.layout->code;
  const std::size_t align = unit.layout->alignment;
  if ((reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(inout)) % align ==
      0) {
    kernels::run(kind, code, in, inout, n);
    return;
  }
  const std::size_t bytes = n * static_cast<std::size_t>(unit.extent());
  Scratch a(unit, n);
  Scratch b(unit, n);
  std::memcpy(a.data, in, bytes);
  std::memcpy(b.data, inout, bytes);
  kernels::run(kind, code, a.data, b.data, n);
  std::memcpy(inout, b.data, bytes);
}

// Which predefined operation is defined on which predefined type (TypeCode::logical is the last
// code), asked of the kernels once at load: every reduction asks it twice per call (the argument
// check, apply()), and the kernels' dispatch costs more than an 8-byte MPI_SUM.
constexpr std::size_t kKinds = static_cast<std::size_t>(OpKind::user) + 1;
constexpr std::size_t kCodes = static_cast<std::size_t>(TypeCode::logical) + 1;
const std::array<std::array<bool, kCodes>, kKinds> kDefined = [] {
  std::array<std::array<bool, kCodes>, kKinds> defined{};
  for (std::size_t k = 0; k < kKinds; ++k) {
    for (std::size_t c = 0; c < kCodes; ++c) {
      defined[k][c] =
          kernels::run(static_cast<OpKind>(k), static_cast<TypeCode>(c), nullptr, nullptr, 0);
    }
  }
  return defined;
}();

void apply_user(MPI_Op op, const void* in, void* inout, std::size_t count, MPI_Datatype type) {
  if (op->large_function != nullptr) {
    MPI_Count len = static_cast<MPI_Count>(count);
    MPI_Datatype handle = type;
    op->large_function(at(in, 0), inout, &len, &handle);
    return;
  }
  // The user function takes an int count: a larger one goes in several calls.
  const std::size_t step = INT_MAX;
  for (std::size_t done = 0; done < count; done += step) {
    int len = static_cast<int>(std::min(step, count - done));
    const MPI_Aint skip = static_cast<MPI_Aint>(done) * type->extent();
    MPI_Datatype handle = type;
    if (op->fortran_function != nullptr) {
      MPI_Fint fortran_len = len, fortran_type = MPI_Type_c2f(type);
      op->fortran_function(at(in, skip), at(inout, skip), &fortran_len, &fortran_type);
      continue;
    }
    op->function(at(in, skip), at(inout, skip), &len, &handle);
  }
}

}  // namespace

void retain(MPI_Op op) {
  if (op->kind != OpKind::user) return;
  // relaxed: a new reference is taken from one the caller already holds.
  op->references.fetch_add(1, std::memory_order_relaxed);
}

void release(MPI_Op op) {
  if (op->kind != OpKind::user) return;
  // acq_rel: the last release must see every use made under the other references.
  if (op->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete op;
}

bool commutative(MPI_Op op) {
  return op->commutative;
}

std::string_view name(MPI_Op op) {
  return op->name;
}

bool defined_for(MPI_Op op, MPI_Datatype type) {
  switch (op->kind) {
    case OpKind::user:
    case OpKind::replace:
    case OpKind::no_op:
      return true;
    default:
      break;
  }
  const weft_mpi_datatype* unit = type->layout->unit;
  return unit != nullptr &&
         kDefined[static_cast<std::size_t>(op->kind)][static_cast<std::size_t>(unit->layout->code)];
}

int apply(MPI_Op op, const void* in, void* inout, std::size_t count, MPI_Datatype type) {
  if (!defined_for(op, type)) return MPI_ERR_OP;
  switch (op->kind) {
    case OpKind::user:
      apply_user(op, in, inout, count, type);
      return MPI_SUCCESS;
    case OpKind::no_op:
      return MPI_SUCCESS;
    case OpKind::replace:
      copy(in, count, *type, inout, count, *type);
      return MPI_SUCCESS;
    default:
      break;
  }
  const weft_mpi_datatype::Layout& layout = *type->layout;
  const Datatype& unit = *layout.unit;
  const std::size_t unit_size = unit.size();
  if (count == 0 || layout.size == 0) return MPI_SUCCESS;
  if (&unit == type) {
    run_units(op->kind, unit, at(in, type->true_lb()), at(inout, type->true_lb()), count);
    return MPI_SUCCESS;
  }
  if (unit.layout->block_count == 1 && static_cast<std::size_t>(unit.extent()) == unit_size) {
    // Every block of the type is a run of whole units (blocks merge whole units only).
    for (std::size_t e = 0; e < count; ++e) {
      for (std::size_t r = 0; r < layout.repeat; ++r) {
        const MPI_Aint base =
            static_cast<MPI_Aint>(e) * layout.extent + static_cast<MPI_Aint>(r) * layout.stride;
        for (std::size_t b = 0; b < layout.block_count; ++b) {
          const MPI_Aint offset = base + layout.blocks[b].offset;
          run_units(op->kind, unit, at(in, offset), at(inout, offset),
                    layout.blocks[b].length / unit_size);
        }
      }
    }
    return MPI_SUCCESS;
  }
  // Units with holes (MPI_DOUBLE_INT...) repeated by a derived type: gathered into arrays of
  // units, reduced, scattered back.
  const std::size_t units = count * layout.unit_count;
  Scratch a(unit, units);
  Scratch b(unit, units);
  copy(in, count, *type, a.data, units, unit);
  copy(inout, count, *type, b.data, units, unit);
  kernels::run(op->kind, unit.layout->code, a.data, b.data, units);
  copy(b.data, units, unit, inout, count, *type);
  return MPI_SUCCESS;
}

}  // namespace weft::mpi
