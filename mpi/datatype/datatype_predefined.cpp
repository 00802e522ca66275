// The predefined datatypes of mpi.h. Constant-initialised: a static constructor anywhere (a rank
// program's) may use them.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "datatype/datatype_layout.h"

namespace weft::mpi {
namespace {

using Layout = weft_mpi_datatype::Layout;

template <std::size_t Bytes>
constexpr Block kWhole[1] = {{0, Bytes}};
template <std::size_t Bytes>
constexpr std::size_t kWholeEnd[1] = {Bytes};

template <class T>
constexpr Layout scalar(TypeCode code, std::string_view name, const weft_mpi_datatype* self) {
  return Layout{.blocks = kWhole<sizeof(T)>,
                .block_count = 1,
                .block_ends = kWholeEnd<sizeof(T)>,
                .repeat = 1,
                .stride = 0,
                .size = sizeof(T),
                .lb = 0,
                .extent = sizeof(T),
                .true_lb = 0,
                .true_extent = sizeof(T),
                .alignment = alignof(T),
                .explicit_bounds = false,
                .predefined = true,
                .code = code,
                .basic = self,
                .basic_count = 1,
                .unit = self,
                .unit_count = 1,
                .committed = {true},
                .references = {1},
                .name_lock = {},
                .name = object_name(name),
                .parts = nullptr};
}

// The C struct {A value; B index;} that MPI_MAXLOC and MPI_MINLOC read, padding included.
template <class A, class B>
struct PairOf {
  A value;
  B index;
};

template <class A, class B>
constexpr std::size_t index_offset() {
  using Pair = PairOf<A, B>;
  return offsetof(Pair, index);
}
template <class A, class B>
constexpr std::size_t kIndexAt = index_offset<A, B>();
// One block when the index follows the value directly, else two.
template <class A, class B>
constexpr bool kSplit = kIndexAt<A, B> != sizeof(A);
template <class A, class B>
constexpr Block kPairBlocks[2] = {{0, kSplit<A, B> ? sizeof(A) : sizeof(A) + sizeof(B)},
                                  {static_cast<MPI_Aint>(kIndexAt<A, B>), sizeof(B)}};
template <class A, class B>
constexpr std::size_t kPairEnds[2] = {kPairBlocks<A, B>[0].length, sizeof(A) + sizeof(B)};

template <class A, class B>
constexpr Layout pair(TypeCode code, std::string_view name, const weft_mpi_datatype* self) {
  return Layout{.blocks = kPairBlocks<A, B>,
                .block_count = kSplit<A, B> ? 2u : 1u,
                .block_ends = kPairEnds<A, B>,
                .repeat = 1,
                .stride = 0,
                .size = sizeof(A) + sizeof(B),
                .lb = 0,
                .extent = sizeof(PairOf<A, B>),
                .true_lb = 0,
                .true_extent = static_cast<MPI_Aint>(kIndexAt<A, B> + sizeof(B)),
                .alignment = alignof(PairOf<A, B>),
                .explicit_bounds = false,
                .predefined = true,
                .code = code,
                .basic = nullptr,
                .basic_count = 0,
                .unit = self,
                .unit_count = 1,
                .committed = {true},
                .references = {1},
                .name_lock = {},
                .name = object_name(name),
                .parts = nullptr};
}

constinit Layout char_layout = scalar<char>(TypeCode::char_, "MPI_CHAR", &weft_mpi_char);
constinit Layout short_layout = scalar<short>(TypeCode::short_, "MPI_SHORT", &weft_mpi_short);
constinit Layout int_layout = scalar<int>(TypeCode::int_, "MPI_INT", &weft_mpi_int);
constinit Layout long_layout = scalar<long>(TypeCode::long_, "MPI_LONG", &weft_mpi_long);
constinit Layout long_long_layout =
    scalar<long long>(TypeCode::long_long, "MPI_LONG_LONG_INT", &weft_mpi_long_long);
constinit Layout signed_char_layout =
    scalar<signed char>(TypeCode::signed_char, "MPI_SIGNED_CHAR", &weft_mpi_signed_char);
constinit Layout unsigned_char_layout =
    scalar<unsigned char>(TypeCode::unsigned_char, "MPI_UNSIGNED_CHAR", &weft_mpi_unsigned_char);
constinit Layout unsigned_short_layout = scalar<unsigned short>(
    TypeCode::unsigned_short, "MPI_UNSIGNED_SHORT", &weft_mpi_unsigned_short);
constinit Layout unsigned_layout =
    scalar<unsigned>(TypeCode::unsigned_, "MPI_UNSIGNED", &weft_mpi_unsigned);
constinit Layout unsigned_long_layout =
    scalar<unsigned long>(TypeCode::unsigned_long, "MPI_UNSIGNED_LONG", &weft_mpi_unsigned_long);
constinit Layout unsigned_long_long_layout = scalar<unsigned long long>(
    TypeCode::unsigned_long_long, "MPI_UNSIGNED_LONG_LONG", &weft_mpi_unsigned_long_long);
constinit Layout float_layout = scalar<float>(TypeCode::float_, "MPI_FLOAT", &weft_mpi_float);
constinit Layout double_layout = scalar<double>(TypeCode::double_, "MPI_DOUBLE", &weft_mpi_double);
constinit Layout long_double_layout =
    scalar<long double>(TypeCode::long_double, "MPI_LONG_DOUBLE", &weft_mpi_long_double);
constinit Layout wchar_layout = scalar<wchar_t>(TypeCode::wchar, "MPI_WCHAR", &weft_mpi_wchar);
constinit Layout c_bool_layout = scalar<bool>(TypeCode::c_bool, "MPI_C_BOOL", &weft_mpi_c_bool);
constinit Layout int8_layout = scalar<std::int8_t>(TypeCode::int8, "MPI_INT8_T", &weft_mpi_int8_t);
constinit Layout int16_layout =
    scalar<std::int16_t>(TypeCode::int16, "MPI_INT16_T", &weft_mpi_int16_t);
constinit Layout int32_layout =
    scalar<std::int32_t>(TypeCode::int32, "MPI_INT32_T", &weft_mpi_int32_t);
constinit Layout int64_layout =
    scalar<std::int64_t>(TypeCode::int64, "MPI_INT64_T", &weft_mpi_int64_t);
constinit Layout uint8_layout =
    scalar<std::uint8_t>(TypeCode::uint8, "MPI_UINT8_T", &weft_mpi_uint8_t);
constinit Layout uint16_layout =
    scalar<std::uint16_t>(TypeCode::uint16, "MPI_UINT16_T", &weft_mpi_uint16_t);
constinit Layout uint32_layout =
    scalar<std::uint32_t>(TypeCode::uint32, "MPI_UINT32_T", &weft_mpi_uint32_t);
constinit Layout uint64_layout =
    scalar<std::uint64_t>(TypeCode::uint64, "MPI_UINT64_T", &weft_mpi_uint64_t);
constinit Layout aint_layout = scalar<MPI_Aint>(TypeCode::aint, "MPI_AINT", &weft_mpi_aint);
constinit Layout count_layout = scalar<MPI_Count>(TypeCode::count, "MPI_COUNT", &weft_mpi_count);
constinit Layout offset_layout =
    scalar<MPI_Offset>(TypeCode::offset, "MPI_OFFSET", &weft_mpi_offset);
// MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are one handle: it answers to the first name, as in
// MPICH (whose datatype/typename takes no other for MPI_C_COMPLEX).
constinit Layout c_float_complex_layout = scalar<std::complex<float>>(
    TypeCode::float_complex, "MPI_C_COMPLEX", &weft_mpi_c_float_complex);
constinit Layout c_double_complex_layout = scalar<std::complex<double>>(
    TypeCode::double_complex, "MPI_C_DOUBLE_COMPLEX", &weft_mpi_c_double_complex);
constinit Layout c_long_double_complex_layout = scalar<std::complex<long double>>(
    TypeCode::long_double_complex, "MPI_C_LONG_DOUBLE_COMPLEX", &weft_mpi_c_long_double_complex);
constinit Layout cxx_bool_layout =
    scalar<bool>(TypeCode::cxx_bool, "MPI_CXX_BOOL", &weft_mpi_cxx_bool);
constinit Layout cxx_float_complex_layout = scalar<std::complex<float>>(
    TypeCode::float_complex, "MPI_CXX_FLOAT_COMPLEX", &weft_mpi_cxx_float_complex);
constinit Layout cxx_double_complex_layout = scalar<std::complex<double>>(
    TypeCode::double_complex, "MPI_CXX_DOUBLE_COMPLEX", &weft_mpi_cxx_double_complex);
constinit Layout cxx_long_double_complex_layout =
    scalar<std::complex<long double>>(TypeCode::long_double_complex, "MPI_CXX_LONG_DOUBLE_COMPLEX",
                                      &weft_mpi_cxx_long_double_complex);
constinit Layout byte_layout = scalar<unsigned char>(TypeCode::byte, "MPI_BYTE", &weft_mpi_byte);
constinit Layout packed_layout =
    scalar<unsigned char>(TypeCode::packed, "MPI_PACKED", &weft_mpi_packed);
constinit Layout float_int_layout =
    pair<float, int>(TypeCode::float_int, "MPI_FLOAT_INT", &weft_mpi_float_int);
constinit Layout double_int_layout =
    pair<double, int>(TypeCode::double_int, "MPI_DOUBLE_INT", &weft_mpi_double_int);
constinit Layout long_int_layout =
    pair<long, int>(TypeCode::long_int, "MPI_LONG_INT", &weft_mpi_long_int);
constinit Layout two_int_layout = pair<int, int>(TypeCode::two_int, "MPI_2INT", &weft_mpi_2int);
constinit Layout short_int_layout =
    pair<short, int>(TypeCode::short_int, "MPI_SHORT_INT", &weft_mpi_short_int);
constinit Layout long_double_int_layout = pair<long double, int>(
    TypeCode::long_double_int, "MPI_LONG_DOUBLE_INT", &weft_mpi_long_double_int);

// Fortran's named types, as C sees them (MPI-4.1 19.3.6): the C type of the same size and kind.
constinit Layout character_layout =
    scalar<char>(TypeCode::character, "MPI_CHARACTER", &weft_mpi_character);
constinit Layout logical_layout = scalar<int>(TypeCode::logical, "MPI_LOGICAL", &weft_mpi_logical);
constinit Layout integer_layout = scalar<int>(TypeCode::int_, "MPI_INTEGER", &weft_mpi_integer);
constinit Layout real_layout = scalar<float>(TypeCode::float_, "MPI_REAL", &weft_mpi_real);
constinit Layout double_precision_layout =
    scalar<double>(TypeCode::double_, "MPI_DOUBLE_PRECISION", &weft_mpi_double_precision);
constinit Layout complex_layout =
    scalar<std::complex<float>>(TypeCode::float_complex, "MPI_COMPLEX", &weft_mpi_complex);
constinit Layout double_complex_layout = scalar<std::complex<double>>(
    TypeCode::double_complex, "MPI_DOUBLE_COMPLEX", &weft_mpi_double_complex);
constinit Layout integer1_layout =
    scalar<std::int8_t>(TypeCode::int8, "MPI_INTEGER1", &weft_mpi_integer1);
constinit Layout integer2_layout =
    scalar<std::int16_t>(TypeCode::int16, "MPI_INTEGER2", &weft_mpi_integer2);
constinit Layout integer4_layout =
    scalar<std::int32_t>(TypeCode::int32, "MPI_INTEGER4", &weft_mpi_integer4);
constinit Layout integer8_layout =
    scalar<std::int64_t>(TypeCode::int64, "MPI_INTEGER8", &weft_mpi_integer8);
constinit Layout real4_layout = scalar<float>(TypeCode::float_, "MPI_REAL4", &weft_mpi_real4);
constinit Layout real8_layout = scalar<double>(TypeCode::double_, "MPI_REAL8", &weft_mpi_real8);
constinit Layout complex8_layout =
    scalar<std::complex<float>>(TypeCode::float_complex, "MPI_COMPLEX8", &weft_mpi_complex8);
constinit Layout complex16_layout =
    scalar<std::complex<double>>(TypeCode::double_complex, "MPI_COMPLEX16", &weft_mpi_complex16);
constinit Layout real16_layout =
    scalar<__float128>(TypeCode::float128, "MPI_REAL16", &weft_mpi_real16);
constinit Layout integer16_layout =
    scalar<__int128>(TypeCode::int128, "MPI_INTEGER16", &weft_mpi_integer16);
constinit Layout complex32_layout = scalar<std::complex<__float128>>(
    TypeCode::float128_complex, "MPI_COMPLEX32", &weft_mpi_complex32);
constinit Layout two_integer_layout =
    pair<int, int>(TypeCode::two_int, "MPI_2INTEGER", &weft_mpi_2integer);
constinit Layout two_real_layout =
    pair<float, float>(TypeCode::two_float, "MPI_2REAL", &weft_mpi_2real);
constinit Layout two_double_precision_layout = pair<double, double>(
    TypeCode::two_double, "MPI_2DOUBLE_PRECISION", &weft_mpi_2double_precision);

}  // namespace
}  // namespace weft::mpi

using namespace weft::mpi;

weft_mpi_datatype weft_mpi_char{&char_layout};
weft_mpi_datatype weft_mpi_short{&short_layout};
weft_mpi_datatype weft_mpi_int{&int_layout};
weft_mpi_datatype weft_mpi_long{&long_layout};
weft_mpi_datatype weft_mpi_long_long{&long_long_layout};
weft_mpi_datatype weft_mpi_signed_char{&signed_char_layout};
weft_mpi_datatype weft_mpi_unsigned_char{&unsigned_char_layout};
weft_mpi_datatype weft_mpi_unsigned_short{&unsigned_short_layout};
weft_mpi_datatype weft_mpi_unsigned{&unsigned_layout};
weft_mpi_datatype weft_mpi_unsigned_long{&unsigned_long_layout};
weft_mpi_datatype weft_mpi_unsigned_long_long{&unsigned_long_long_layout};
weft_mpi_datatype weft_mpi_float{&float_layout};
weft_mpi_datatype weft_mpi_double{&double_layout};
weft_mpi_datatype weft_mpi_long_double{&long_double_layout};
weft_mpi_datatype weft_mpi_wchar{&wchar_layout};
weft_mpi_datatype weft_mpi_c_bool{&c_bool_layout};
weft_mpi_datatype weft_mpi_int8_t{&int8_layout};
weft_mpi_datatype weft_mpi_int16_t{&int16_layout};
weft_mpi_datatype weft_mpi_int32_t{&int32_layout};
weft_mpi_datatype weft_mpi_int64_t{&int64_layout};
weft_mpi_datatype weft_mpi_uint8_t{&uint8_layout};
weft_mpi_datatype weft_mpi_uint16_t{&uint16_layout};
weft_mpi_datatype weft_mpi_uint32_t{&uint32_layout};
weft_mpi_datatype weft_mpi_uint64_t{&uint64_layout};
weft_mpi_datatype weft_mpi_aint{&aint_layout};
weft_mpi_datatype weft_mpi_count{&count_layout};
weft_mpi_datatype weft_mpi_offset{&offset_layout};
weft_mpi_datatype weft_mpi_c_float_complex{&c_float_complex_layout};
weft_mpi_datatype weft_mpi_c_double_complex{&c_double_complex_layout};
weft_mpi_datatype weft_mpi_c_long_double_complex{&c_long_double_complex_layout};
weft_mpi_datatype weft_mpi_cxx_bool{&cxx_bool_layout};
weft_mpi_datatype weft_mpi_cxx_float_complex{&cxx_float_complex_layout};
weft_mpi_datatype weft_mpi_cxx_double_complex{&cxx_double_complex_layout};
weft_mpi_datatype weft_mpi_cxx_long_double_complex{&cxx_long_double_complex_layout};
weft_mpi_datatype weft_mpi_byte{&byte_layout};
weft_mpi_datatype weft_mpi_packed{&packed_layout};
weft_mpi_datatype weft_mpi_float_int{&float_int_layout};
weft_mpi_datatype weft_mpi_double_int{&double_int_layout};
weft_mpi_datatype weft_mpi_long_int{&long_int_layout};
weft_mpi_datatype weft_mpi_2int{&two_int_layout};
weft_mpi_datatype weft_mpi_short_int{&short_int_layout};
weft_mpi_datatype weft_mpi_long_double_int{&long_double_int_layout};
weft_mpi_datatype weft_mpi_character{&character_layout};
weft_mpi_datatype weft_mpi_logical{&logical_layout};
weft_mpi_datatype weft_mpi_integer{&integer_layout};
weft_mpi_datatype weft_mpi_real{&real_layout};
weft_mpi_datatype weft_mpi_double_precision{&double_precision_layout};
weft_mpi_datatype weft_mpi_complex{&complex_layout};
weft_mpi_datatype weft_mpi_double_complex{&double_complex_layout};
weft_mpi_datatype weft_mpi_integer1{&integer1_layout};
weft_mpi_datatype weft_mpi_integer2{&integer2_layout};
weft_mpi_datatype weft_mpi_integer4{&integer4_layout};
weft_mpi_datatype weft_mpi_integer8{&integer8_layout};
weft_mpi_datatype weft_mpi_real4{&real4_layout};
weft_mpi_datatype weft_mpi_real8{&real8_layout};
weft_mpi_datatype weft_mpi_complex8{&complex8_layout};
weft_mpi_datatype weft_mpi_complex16{&complex16_layout};
weft_mpi_datatype weft_mpi_real16{&real16_layout};
weft_mpi_datatype weft_mpi_complex32{&complex32_layout};
weft_mpi_datatype weft_mpi_integer16{&integer16_layout};
weft_mpi_datatype weft_mpi_2integer{&two_integer_layout};
weft_mpi_datatype weft_mpi_2real{&two_real_layout};
weft_mpi_datatype weft_mpi_2double_precision{&two_double_precision_layout};
