// The predefined reductions as element-wise loops over C types, and the groups of MPI-3.1 5.9.2
// that say which type each operation accepts. One loop per (operation, C type) pair, written once
// as a template: the compiler vectorises the arithmetic and bitwise ones.
#pragma once

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "datatype/datatype_layout.h"
#include "op/op_object.h"

namespace weft::mpi::kernels {

template <class T>
using Tag = std::type_identity<T>;

// Each group calls f(Tag<C type>) when `code` belongs to it and says whether it did.
// MPI_CHAR counts as a C integer: MPI-4.1 6.9.2 leaves it out, but MPICH and Open MPI both
// reduce it as one (OSU's collectives sum MPI_CHAR by default). MPI_WCHAR stays out, as in both.
template <class F>
bool c_integer(TypeCode code, F&& f) {
  switch (code) {
    case TypeCode::char_:
      f(Tag<char>{});
      return true;
    case TypeCode::signed_char:
      f(Tag<signed char>{});
      return true;
    case TypeCode::unsigned_char:
      f(Tag<unsigned char>{});
      return true;
    case TypeCode::short_:
      f(Tag<short>{});
      return true;
    case TypeCode::unsigned_short:
      f(Tag<unsigned short>{});
      return true;
    case TypeCode::int_:
      f(Tag<int>{});
      return true;
    case TypeCode::unsigned_:
      f(Tag<unsigned>{});
      return true;
    case TypeCode::long_:
      f(Tag<long>{});
      return true;
    case TypeCode::unsigned_long:
      f(Tag<unsigned long>{});
      return true;
    case TypeCode::long_long:
      f(Tag<long long>{});
      return true;
    case TypeCode::unsigned_long_long:
      f(Tag<unsigned long long>{});
      return true;
    case TypeCode::int8:
      f(Tag<std::int8_t>{});
      return true;
    case TypeCode::int16:
      f(Tag<std::int16_t>{});
      return true;
    case TypeCode::int32:
      f(Tag<std::int32_t>{});
      return true;
    case TypeCode::int64:
      f(Tag<std::int64_t>{});
      return true;
    case TypeCode::int128:
      f(Tag<__int128>{});
      return true;
    case TypeCode::uint8:
      f(Tag<std::uint8_t>{});
      return true;
    case TypeCode::uint16:
      f(Tag<std::uint16_t>{});
      return true;
    case TypeCode::uint32:
      f(Tag<std::uint32_t>{});
      return true;
    case TypeCode::uint64:
      f(Tag<std::uint64_t>{});
      return true;
    default:
      return false;
  }
}

// MPI_AINT, MPI_OFFSET, MPI_COUNT.
template <class F>
bool multi_language(TypeCode code, F&& f) {
  switch (code) {
    case TypeCode::aint:
      f(Tag<MPI_Aint>{});
      return true;
    case TypeCode::offset:
      f(Tag<MPI_Offset>{});
      return true;
    case TypeCode::count:
      f(Tag<MPI_Count>{});
      return true;
    default:
      return false;
  }
}

template <class F>
bool floating(TypeCode code, F&& f) {
  switch (code) {
    case TypeCode::float_:
      f(Tag<float>{});
      return true;
    case TypeCode::double_:
      f(Tag<double>{});
      return true;
    case TypeCode::long_double:
      f(Tag<long double>{});
      return true;
    case TypeCode::float128:
      f(Tag<__float128>{});
      return true;
    default:
      return false;
  }
}

template <class F>
bool complex(TypeCode code, F&& f) {
  switch (code) {
    case TypeCode::float_complex:
      f(Tag<std::complex<float>>{});
      return true;
    case TypeCode::double_complex:
      f(Tag<std::complex<double>>{});
      return true;
    case TypeCode::long_double_complex:
      f(Tag<std::complex<long double>>{});
      return true;
    case TypeCode::float128_complex:
      f(Tag<std::complex<__float128>>{});
      return true;
    default:
      return false;
  }
}

// MPI_C_BOOL, MPI_CXX_BOOL and Fortran's MPI_LOGICAL (an int).
template <class F>
bool logical(TypeCode code, F&& f) {
  if (code == TypeCode::logical) {
    f(Tag<int>{});
    return true;
  }
  if (code != TypeCode::c_bool && code != TypeCode::cxx_bool) return false;
  f(Tag<bool>{});
  return true;
}

template <class F>
bool byte(TypeCode code, F&& f) {
  if (code != TypeCode::byte) return false;
  f(Tag<unsigned char>{});
  return true;
}

// The layouts of MPI_FLOAT_INT and the other pair types.
template <class V, class I>
struct Pair {
  V value;
  I index;
};

template <class F>
bool pair(TypeCode code, F&& f) {
  switch (code) {
    case TypeCode::float_int:
      f(Tag<Pair<float, int>>{});
      return true;
    case TypeCode::double_int:
      f(Tag<Pair<double, int>>{});
      return true;
    case TypeCode::long_int:
      f(Tag<Pair<long, int>>{});
      return true;
    case TypeCode::two_int:
      f(Tag<Pair<int, int>>{});
      return true;
    case TypeCode::short_int:
      f(Tag<Pair<short, int>>{});
      return true;
    case TypeCode::long_double_int:
      f(Tag<Pair<long double, int>>{});
      return true;
    case TypeCode::two_float:
      f(Tag<Pair<float, float>>{});
      return true;
    case TypeCode::two_double:
      f(Tag<Pair<double, double>>{});
      return true;
    default:
      return false;
  }
}

// inout[i] = op(in[i], inout[i]). In blocks of a fixed length first: GCC's -O2 cost model only
// vectorises a loop whose trip count is a multiple of the vector length.
template <class T, class Op>
void each(const T* __restrict in, T* __restrict inout, std::size_t n, Op op) {
  constexpr std::size_t kBlock = sizeof(T) < 64 ? 64 / sizeof(T) : 1;
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (std::size_t j = 0; j < kBlock; ++j) inout[i + j] = op(in[i + j], inout[i + j]);
  }
  for (; i < n; ++i) inout[i] = op(in[i], inout[i]);
}

// Dispatches `kind` over the C type of `code`: returns false, doing nothing, when the operation is
// not defined on it. With n == 0 it only answers the question. The operations are stateless and
// the loop over the buffers is made in the operation's case only: making the twelve loops up front
// cost more than the loop itself on a few elements (an 8-byte MPI_SUM).
inline bool run(OpKind kind, TypeCode code, const void* in, void* inout, std::size_t n) {
  const auto loop = [&](auto op) {
    return [&, op](auto tag) {
      using T = typename decltype(tag)::type;
      each(static_cast<const T*>(in), static_cast<T*>(inout), n, op);
    };
  };
  const auto max = [](auto a, auto b) { return a > b ? a : b; };
  const auto min = [](auto a, auto b) { return a < b ? a : b; };
  const auto sum = [](auto a, auto b) { return decltype(a)(a + b); };
  const auto prod = [](auto a, auto b) { return decltype(a)(a * b); };
  const auto land = [](auto a, auto b) { return decltype(a)(a != 0 && b != 0); };
  const auto lor = [](auto a, auto b) { return decltype(a)(a != 0 || b != 0); };
  const auto lxor = [](auto a, auto b) { return decltype(a)((a != 0) != (b != 0)); };
  const auto band = [](auto a, auto b) { return decltype(a)(a & b); };
  const auto bor = [](auto a, auto b) { return decltype(a)(a | b); };
  const auto bxor = [](auto a, auto b) { return decltype(a)(a ^ b); };
  // MPI-3.1 5.9.4: the larger (smaller) value wins; on a tie, the smaller index.
  const auto maxloc = [](auto a, auto b) {
    if (a.value != b.value) return a.value > b.value ? a : b;
    b.index = std::min(a.index, b.index);
    return b;
  };
  const auto minloc = [](auto a, auto b) {
    if (a.value != b.value) return a.value < b.value ? a : b;
    b.index = std::min(a.index, b.index);
    return b;
  };
  switch (kind) {
    case OpKind::max: {
      const auto f = loop(max);
      return c_integer(code, f) || multi_language(code, f) || floating(code, f);
    }
    case OpKind::min: {
      const auto f = loop(min);
      return c_integer(code, f) || multi_language(code, f) || floating(code, f);
    }
    case OpKind::sum: {
      const auto f = loop(sum);
      return c_integer(code, f) || multi_language(code, f) || floating(code, f) || complex(code, f);
    }
    case OpKind::prod: {
      const auto f = loop(prod);
      return c_integer(code, f) || multi_language(code, f) || floating(code, f) || complex(code, f);
    }
    // MPI-4.1 6.9.2 gives the logical operations C integers and Logical only; MPICH and Open MPI
    // also take the multi-language integers (MPI_AINT, MPI_OFFSET, MPI_COUNT), which programs and
    // MPICH's coll/allred use.
    case OpKind::land: {
      const auto f = loop(land);
      return c_integer(code, f) || multi_language(code, f) || logical(code, f);
    }
    case OpKind::lor: {
      const auto f = loop(lor);
      return c_integer(code, f) || multi_language(code, f) || logical(code, f);
    }
    case OpKind::lxor: {
      const auto f = loop(lxor);
      return c_integer(code, f) || multi_language(code, f) || logical(code, f);
    }
    case OpKind::band: {
      const auto f = loop(band);
      return c_integer(code, f) || multi_language(code, f) || byte(code, f);
    }
    case OpKind::bor: {
      const auto f = loop(bor);
      return c_integer(code, f) || multi_language(code, f) || byte(code, f);
    }
    case OpKind::bxor: {
      const auto f = loop(bxor);
      return c_integer(code, f) || multi_language(code, f) || byte(code, f);
    }
    case OpKind::maxloc:
      return pair(code, loop(maxloc));
    case OpKind::minloc:
      return pair(code, loop(minloc));
    case OpKind::replace:
    case OpKind::no_op:
    case OpKind::user:
      return false;
  }
  return false;
}

}  // namespace weft::mpi::kernels
