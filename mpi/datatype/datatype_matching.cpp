// Finding a predefined type by what it must hold: MPI_Type_match_size (MPI-4.1 19.1.9), the
// Fortran 90 parameterized types (19.1.9) and MPI_Type_get_value_index (MPI-4.1 6.9.4).
//
// The Fortran 90 and value-index types are predefined in the standard's sense: the program never
// frees them, and the same arguments give the same handle. Each is made once (a copy of the C type
// it matches under its own combiner and contents) and kept for the life of the process.
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <tuple>

#include "datatype/datatype_build.h"
#include "datatype/datatype_checks.h"
#include "util/profiling.h"
#include "weft/detail/spin_lock.h"

namespace checks = weft::mpi::datatype_checks;
using weft::mpi::Contents;

namespace {

// The made types, by (combiner, first integer or type, second).
class Cache {
 public:
  template <class Make>
  MPI_Datatype get(int combiner, std::intptr_t a, std::intptr_t b, Make&& make) {
    std::lock_guard lock(lock_);
    MPI_Datatype& slot = types_[{combiner, a, b}];
    if (slot == MPI_DATATYPE_NULL) {
      slot = make();
      PMPI_Type_commit(&slot);
    }
    return slot;
  }

 private:
  weft::detail::SpinLock lock_;
  std::map<std::tuple<int, std::intptr_t, std::intptr_t>, MPI_Datatype> types_;
};

Cache& cache() {
  // Never destroyed: the handles stay valid until the process ends.
  static Cache* const instance = new Cache;
  return *instance;
}

MPI_Datatype named_copy(MPI_Datatype type, Contents contents) {
  return weft::mpi::build_resized(type, type->lb(), type->extent(), std::move(contents));
}

// A precision p (decimal digits, MPI_UNDEFINED for any) and range r (decimal exponent) that the
// C floating types hold: the smallest that does.
MPI_Datatype real_for(int p, int r) {
  struct Real {
    MPI_Datatype type;
    int precision;
    int range;
  };
  const Real reals[] = {{MPI_FLOAT, 6, 37}, {MPI_DOUBLE, 15, 307}, {MPI_LONG_DOUBLE, 18, 4931}};
  for (const Real& real : reals) {
    if ((p == MPI_UNDEFINED || p <= real.precision) && (r == MPI_UNDEFINED || r <= real.range)) {
      return real.type;
    }
  }
  return MPI_DATATYPE_NULL;
}

int check_out(std::string_view function, const MPI_Datatype* newtype) {
  return checks::pointer(function, "newtype", newtype);
}

int no_match(std::string_view function, const std::string& what) {
  return checks::fail(function, MPI_ERR_ARG, what + ": no C type holds it, expected one that fits");
}

}  // namespace

extern "C" int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_f90_integer";
  if (int rc = check_out(kFunction, newtype); rc != MPI_SUCCESS) return rc;
  // The smallest integer holding every number of r decimal digits: 10^r - 1 fits.
  MPI_Datatype type = MPI_DATATYPE_NULL;
  if (r <= 2) {
    type = MPI_INT8_T;
  } else if (r <= 4) {
    type = MPI_INT16_T;
  } else if (r <= 9) {
    type = MPI_INT32_T;
  } else if (r <= 18) {
    type = MPI_INT64_T;
  }
  if (type == MPI_DATATYPE_NULL) return no_match(kFunction, "r = " + std::to_string(r));
  *newtype = cache().get(MPI_COMBINER_F90_INTEGER, r, 0, [&] {
    return named_copy(type, Contents{MPI_COMBINER_F90_INTEGER, {r}, {}, {}});
  });
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_f90_integer);

extern "C" int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_f90_real";
  if (int rc = check_out(kFunction, newtype); rc != MPI_SUCCESS) return rc;
  const MPI_Datatype type = real_for(p, r);
  if (type == MPI_DATATYPE_NULL) {
    return no_match(kFunction, "p = " + std::to_string(p) + ", r = " + std::to_string(r));
  }
  *newtype = cache().get(MPI_COMBINER_F90_REAL, p, r, [&] {
    return named_copy(type, Contents{MPI_COMBINER_F90_REAL, {p, r}, {}, {}});
  });
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_f90_real);

extern "C" int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  constexpr std::string_view kFunction = "MPI_Type_create_f90_complex";
  if (int rc = check_out(kFunction, newtype); rc != MPI_SUCCESS) return rc;
  const MPI_Datatype real = real_for(p, r);
  const MPI_Datatype type = real == MPI_FLOAT         ? MPI_C_FLOAT_COMPLEX
                            : real == MPI_DOUBLE      ? MPI_C_DOUBLE_COMPLEX
                            : real == MPI_LONG_DOUBLE ? MPI_C_LONG_DOUBLE_COMPLEX
                                                      : MPI_DATATYPE_NULL;
  if (type == MPI_DATATYPE_NULL) {
    return no_match(kFunction, "p = " + std::to_string(p) + ", r = " + std::to_string(r));
  }
  *newtype = cache().get(MPI_COMBINER_F90_COMPLEX, p, r, [&] {
    return named_copy(type, Contents{MPI_COMBINER_F90_COMPLEX, {p, r}, {}, {}});
  });
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_create_f90_complex);

extern "C" int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  constexpr std::string_view kFunction = "MPI_Type_match_size";
  if (int rc = checks::pointer(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  const MPI_Datatype integers[] = {MPI_SIGNED_CHAR, MPI_SHORT,     MPI_INT,
                                   MPI_LONG,        MPI_LONG_LONG, MPI_INTEGER16};
  const MPI_Datatype reals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
  const MPI_Datatype complexes[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                    MPI_C_LONG_DOUBLE_COMPLEX};
  std::span<const MPI_Datatype> candidates;
  switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
      candidates = integers;
      break;
    case MPI_TYPECLASS_REAL:
      candidates = reals;
      break;
    case MPI_TYPECLASS_COMPLEX:
      candidates = complexes;
      break;
    default:
      return checks::fail(kFunction, MPI_ERR_ARG,
                          "typeclass = " + std::to_string(typeclass) +
                              ", expected MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX");
  }
  for (MPI_Datatype candidate : candidates) {
    if (static_cast<int>(candidate->size()) == size) {
      *datatype = candidate;
      return MPI_SUCCESS;
    }
  }
  return no_match(kFunction,
                  "size = " + std::to_string(size) + " in typeclass " + std::to_string(typeclass));
}
WEFT_MPI_ALIAS(MPI_Type_match_size);

extern "C" int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                                         MPI_Datatype* pair_type) {
  constexpr std::string_view kFunction = "MPI_Type_get_value_index";
  if (int rc = checks::type(kFunction, "value_type", value_type); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::type(kFunction, "index_type", index_type); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "pair_type", pair_type); rc != MPI_SUCCESS) return rc;
  if (!value_type->predefined() || !index_type->predefined()) {
    return checks::fail(kFunction, MPI_ERR_TYPE,
                        "a derived value_type or index_type, expected predefined types");
  }
  // The pairs MPI_MAXLOC and MPI_MINLOC know are the predefined pair types themselves.
  if (index_type == MPI_INT) {
    const std::pair<MPI_Datatype, MPI_Datatype> known[] = {
        {MPI_FLOAT, MPI_FLOAT_INT}, {MPI_DOUBLE, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_LONG_INT},   {MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_SHORT_INT}, {MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT}};
    for (const auto& [value, pair] : known) {
      if (value == value_type) {
        *pair_type = pair;
        return MPI_SUCCESS;
      }
    }
  }
  // Any other pair: the C struct {value; index;} (the index at its alignment, the extent padded
  // as a struct's), made once.
  *pair_type = cache().get(
      MPI_COMBINER_VALUE_INDEX, reinterpret_cast<std::intptr_t>(value_type),
      reinterpret_cast<std::intptr_t>(index_type), [&] {
        const std::size_t align = index_type->layout->alignment;
        const auto index_at =
            static_cast<MPI_Aint>((value_type->size() + align - 1) / align * align);
        return weft::mpi::build(
            {{0, 1, value_type}, {index_at, 1, index_type}}, weft::mpi::Padding::alignment,
            Contents{MPI_COMBINER_VALUE_INDEX, {}, {}, {value_type, index_type}});
      });
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Type_get_value_index);
