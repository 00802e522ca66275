// Reductions: every predefined operation on every type MPI-3.1 5.9.2 allows it on, against values
// computed here element by element; the types it refuses; MAXLOC/MINLOC ties; derived types;
// user operations; MPI_Op_free and MPI_Reduce_local errors in a job.
#include "op/op.h"

#include <gtest/gtest.h>

#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "datatype/datatype.h"
#include "mpi_test_util.h"

namespace {

using weft::mpi::apply;
using weft::mpi::defined_for;

// inout = op(in, inout) through weft::mpi::apply, compared with `expected(in[i], inout[i])`.
template <class T, class Expected>
void expect_op(MPI_Op op, MPI_Datatype type, const std::vector<T>& in, std::vector<T> inout,
               Expected expected) {
  std::vector<T> want(inout.size());
  for (std::size_t i = 0; i < in.size(); ++i) want[i] = expected(in[i], inout[i]);
  ASSERT_TRUE(defined_for(op, type)) << weft::mpi::name(op) << " on " << type->name();
  ASSERT_EQ(apply(op, in.data(), inout.data(), in.size(), type), MPI_SUCCESS);
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_TRUE(inout[i] == want[i])
        << weft::mpi::name(op) << " on " << type->name() << " at " << i;
  }
}

void expect_refused(MPI_Op op, MPI_Datatype type) {
  EXPECT_FALSE(defined_for(op, type)) << weft::mpi::name(op) << " on " << type->name();
  char in[64] = {}, inout[64] = {1};
  EXPECT_EQ(apply(op, in, inout, 1, type), MPI_ERR_OP);
  EXPECT_EQ(inout[0], 1);
}

template <class T>
T as(long long v) {
  return static_cast<T>(v);
}

// Arithmetic and bitwise operations on an integer type (values small enough for int8_t).
template <class T>
void integer_ops(MPI_Datatype type, bool logical_too) {
  const bool is_signed = T(-1) < T(0);
  const std::vector<T> in = {as<T>(0), as<T>(1), as<T>(5), as<T>(is_signed ? -3 : 3),
                             as<T>(7), as<T>(2), as<T>(12)};
  const std::vector<T> inout = {as<T>(3), as<T>(1), as<T>(0), as<T>(4),
                                as<T>(7), as<T>(6), as<T>(9)};
  expect_op<T>(MPI_MAX, type, in, inout, [](T a, T b) { return a > b ? a : b; });
  expect_op<T>(MPI_MIN, type, in, inout, [](T a, T b) { return a < b ? a : b; });
  expect_op<T>(MPI_SUM, type, in, inout, [](T a, T b) { return T(a + b); });
  expect_op<T>(MPI_PROD, type, in, inout, [](T a, T b) { return T(a * b); });
  expect_op<T>(MPI_BAND, type, in, inout, [](T a, T b) { return T(a & b); });
  expect_op<T>(MPI_BOR, type, in, inout, [](T a, T b) { return T(a | b); });
  expect_op<T>(MPI_BXOR, type, in, inout, [](T a, T b) { return T(a ^ b); });
  if (logical_too) {
    expect_op<T>(MPI_LAND, type, in, inout, [](T a, T b) { return T(a && b ? 1 : 0); });
    expect_op<T>(MPI_LOR, type, in, inout, [](T a, T b) { return T(a || b ? 1 : 0); });
    expect_op<T>(MPI_LXOR, type, in, inout, [](T a, T b) { return T(!a != !b ? 1 : 0); });
  } else {
    for (MPI_Op op : {MPI_LAND, MPI_LOR, MPI_LXOR}) expect_refused(op, type);
  }
  for (MPI_Op op : {MPI_MAXLOC, MPI_MINLOC}) expect_refused(op, type);
}

TEST(PredefinedOps, CIntegers) {
  integer_ops<signed char>(MPI_SIGNED_CHAR, true);
  integer_ops<unsigned char>(MPI_UNSIGNED_CHAR, true);
  integer_ops<short>(MPI_SHORT, true);
  integer_ops<unsigned short>(MPI_UNSIGNED_SHORT, true);
  integer_ops<int>(MPI_INT, true);
  integer_ops<unsigned>(MPI_UNSIGNED, true);
  integer_ops<long>(MPI_LONG, true);
  integer_ops<unsigned long>(MPI_UNSIGNED_LONG, true);
  integer_ops<long long>(MPI_LONG_LONG, true);
  integer_ops<unsigned long long>(MPI_UNSIGNED_LONG_LONG, true);
  integer_ops<std::int8_t>(MPI_INT8_T, true);
  integer_ops<std::int16_t>(MPI_INT16_T, true);
  integer_ops<std::int32_t>(MPI_INT32_T, true);
  integer_ops<std::int64_t>(MPI_INT64_T, true);
  integer_ops<std::uint8_t>(MPI_UINT8_T, true);
  integer_ops<std::uint16_t>(MPI_UINT16_T, true);
  integer_ops<std::uint32_t>(MPI_UINT32_T, true);
  integer_ops<std::uint64_t>(MPI_UINT64_T, true);
}

// MPI-4.1 leaves them out of the logical operations; MPICH and Open MPI take them, and so does
// weft (MPICH's coll/allred reduces them with MPI_LOR).
TEST(PredefinedOps, MultiLanguageTypesAreIntegersToEveryOperation) {
  integer_ops<MPI_Aint>(MPI_AINT, true);
  integer_ops<MPI_Offset>(MPI_OFFSET, true);
  integer_ops<MPI_Count>(MPI_COUNT, true);
}

template <class T>
void floating_ops(MPI_Datatype type) {
  const std::vector<T> in = {T(1.5), T(-2), T(0), T(1e3), T(0.25)};
  const std::vector<T> inout = {T(2.5), T(-3), T(-0.5), T(1e-3), T(0.25)};
  expect_op<T>(MPI_MAX, type, in, inout, [](T a, T b) { return a > b ? a : b; });
  expect_op<T>(MPI_MIN, type, in, inout, [](T a, T b) { return a < b ? a : b; });
  expect_op<T>(MPI_SUM, type, in, inout, [](T a, T b) { return a + b; });
  expect_op<T>(MPI_PROD, type, in, inout, [](T a, T b) { return a * b; });
  for (MPI_Op op : {MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC}) {
    expect_refused(op, type);
  }
}

TEST(PredefinedOps, FloatingPoint) {
  floating_ops<float>(MPI_FLOAT);
  floating_ops<double>(MPI_DOUBLE);
  floating_ops<long double>(MPI_LONG_DOUBLE);
}

template <class T>
void complex_ops(MPI_Datatype type) {
  using C = std::complex<T>;
  const std::vector<C> in = {C(1, 2), C(-1, 0.5), C(0, 0)};
  const std::vector<C> inout = {C(3, -1), C(2, 2), C(5, 1)};
  // (a + bi)(c + di) = (ac - bd) + (ad + bc)i, written out rather than through std::complex.
  expect_op<C>(MPI_SUM, type, in, inout,
               [](C a, C b) { return C(a.real() + b.real(), a.imag() + b.imag()); });
  expect_op<C>(MPI_PROD, type, in, inout, [](C a, C b) {
    return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  });
  for (MPI_Op op : {MPI_MAX, MPI_MIN, MPI_LAND, MPI_BAND}) expect_refused(op, type);
}

TEST(PredefinedOps, Complex) {
  complex_ops<float>(MPI_C_FLOAT_COMPLEX);
  complex_ops<double>(MPI_C_DOUBLE_COMPLEX);
  complex_ops<long double>(MPI_C_LONG_DOUBLE_COMPLEX);
  complex_ops<float>(MPI_CXX_FLOAT_COMPLEX);
  complex_ops<double>(MPI_CXX_DOUBLE_COMPLEX);
  complex_ops<long double>(MPI_CXX_LONG_DOUBLE_COMPLEX);
  EXPECT_EQ(MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX);
}

TEST(PredefinedOps, LogicalAndByte) {
  for (MPI_Datatype type : {MPI_C_BOOL, MPI_CXX_BOOL}) {
    const std::vector<bool> pattern_in = {false, false, true, true};
    const std::vector<bool> pattern_inout = {false, true, false, true};
    std::vector<unsigned char> in, inout;
    for (bool b : pattern_in) in.push_back(b);
    for (bool b : pattern_inout) inout.push_back(b);
    using B = unsigned char;  // bool's bytes, compared as values 0 and 1
    expect_op<B>(MPI_LAND, type, in, inout, [](B a, B b) { return B(a && b); });
    expect_op<B>(MPI_LOR, type, in, inout, [](B a, B b) { return B(a || b); });
    expect_op<B>(MPI_LXOR, type, in, inout, [](B a, B b) { return B(a != b); });
    for (MPI_Op op : {MPI_SUM, MPI_MAX, MPI_BAND}) expect_refused(op, type);
  }
  using U = unsigned char;
  const std::vector<U> in = {0x0f, 0xff, 0xa5};
  const std::vector<U> inout = {0xf0, 0x0f, 0x5a};
  expect_op<U>(MPI_BAND, MPI_BYTE, in, inout, [](U a, U b) { return U(a & b); });
  expect_op<U>(MPI_BOR, MPI_BYTE, in, inout, [](U a, U b) { return U(a | b); });
  expect_op<U>(MPI_BXOR, MPI_BYTE, in, inout, [](U a, U b) { return U(a ^ b); });
  for (MPI_Op op : {MPI_SUM, MPI_MAX, MPI_LAND}) expect_refused(op, MPI_BYTE);
  // Wide characters are not numbers to MPI, nor to MPICH and Open MPI.
  for (MPI_Op op : {MPI_SUM, MPI_MAX, MPI_BAND, MPI_LAND}) expect_refused(op, MPI_WCHAR);
}

// MPI_CHAR is reduced as a C integer, as MPICH and Open MPI do (OSU's collectives sum it).
TEST(PredefinedOps, CharIsReducedAsAnInteger) {
  integer_ops<char>(MPI_CHAR, true);
}

template <class V, class I>
struct Pair {
  V value;
  I index;
  bool operator==(const Pair&) const = default;
};

template <class V>
void loc_ops(MPI_Datatype type) {
  using P = Pair<V, int>;
  // Values: larger in, larger inout, a tie with in's index smaller, a tie with inout's smaller.
  const std::vector<P> in = {{V(5), 1}, {V(1), 2}, {V(3), 3}, {V(4), 9}};
  const std::vector<P> inout = {{V(2), 7}, {V(6), 8}, {V(3), 5}, {V(4), 4}};
  expect_op<P>(MPI_MAXLOC, type, in, inout, [](P a, P b) {
    if (a.value != b.value) return a.value > b.value ? a : b;
    return P{a.value, a.index < b.index ? a.index : b.index};
  });
  expect_op<P>(MPI_MINLOC, type, in, inout, [](P a, P b) {
    if (a.value != b.value) return a.value < b.value ? a : b;
    return P{a.value, a.index < b.index ? a.index : b.index};
  });
  for (MPI_Op op : {MPI_SUM, MPI_MAX, MPI_BAND}) expect_refused(op, type);
}

TEST(PredefinedOps, MaxlocMinlocPairsAndTies) {
  loc_ops<float>(MPI_FLOAT_INT);
  loc_ops<double>(MPI_DOUBLE_INT);
  loc_ops<long>(MPI_LONG_INT);
  loc_ops<int>(MPI_2INT);
  loc_ops<short>(MPI_SHORT_INT);
  loc_ops<long double>(MPI_LONG_DOUBLE_INT);
  // Exactly the tie rule on one pair: the index of in loses to a smaller one of inout.
  Pair<int, int> in{3, 9}, inout{3, 2};
  ASSERT_EQ(apply(MPI_MAXLOC, &in, &inout, 1, MPI_2INT), MPI_SUCCESS);
  EXPECT_EQ(inout.index, 2);
}

TEST(PredefinedOps, ReplaceAndNoOpTakeAnyType) {
  const std::vector<char> in = {'a', 'b'};
  std::vector<char> inout = {'x', 'y'};
  ASSERT_EQ(apply(MPI_NO_OP, in.data(), inout.data(), 2, MPI_CHAR), MPI_SUCCESS);
  EXPECT_EQ(inout, (std::vector<char>{'x', 'y'}));
  ASSERT_EQ(apply(MPI_REPLACE, in.data(), inout.data(), 2, MPI_CHAR), MPI_SUCCESS);
  EXPECT_EQ(inout, in);
}

TEST(DerivedTypes, TheOperationFollowsTheLayout) {
  // A vector of ints: the holes are left alone.
  MPI_Datatype vector;
  ASSERT_EQ(PMPI_Type_vector(4, 2, 3, MPI_INT, &vector), MPI_SUCCESS);
  PMPI_Type_commit(&vector);
  const std::vector<int> in = {1, 2, 100, 3, 4, 100, 5, 6, 100, 7, 8};
  std::vector<int> inout = {10, 20, -1, 30, 40, -1, 50, 60, -1, 70, 80};
  ASSERT_EQ(apply(MPI_SUM, in.data(), inout.data(), 1, vector), MPI_SUCCESS);
  EXPECT_EQ(inout, (std::vector<int>{11, 22, -1, 33, 44, -1, 55, 66, -1, 77, 88}));
  PMPI_Type_free(&vector);

  // Pairs with holes (MPI_DOUBLE_INT) repeated by a contiguous type.
  MPI_Datatype pairs;
  ASSERT_EQ(PMPI_Type_contiguous(2, MPI_DOUBLE_INT, &pairs), MPI_SUCCESS);
  const Pair<double, int> pin[2] = {{1.0, 5}, {7.0, 1}};
  Pair<double, int> pinout[2] = {{1.0, 3}, {2.0, 2}};
  ASSERT_TRUE(defined_for(MPI_MAXLOC, pairs));
  ASSERT_EQ(apply(MPI_MAXLOC, pin, pinout, 1, pairs), MPI_SUCCESS);
  EXPECT_EQ(pinout[0], (Pair<double, int>{1.0, 3}));
  EXPECT_EQ(pinout[1], (Pair<double, int>{7.0, 1}));
  PMPI_Type_free(&pairs);

  // Ints at a misaligned offset.
  MPI_Datatype odd;
  const MPI_Aint at_one[] = {1};
  ASSERT_EQ(PMPI_Type_create_hindexed_block(1, 2, at_one, MPI_INT, &odd), MPI_SUCCESS);
  alignas(int) char in_bytes[16] = {}, inout_bytes[16] = {};
  const int a[2] = {3, 4}, b[2] = {10, 20};
  std::memcpy(in_bytes + 1, a, 8);
  std::memcpy(inout_bytes + 1, b, 8);
  ASSERT_EQ(apply(MPI_SUM, in_bytes, inout_bytes, 1, odd), MPI_SUCCESS);
  int sum[2];
  std::memcpy(sum, inout_bytes + 1, 8);
  EXPECT_EQ(sum[0], 13);
  EXPECT_EQ(sum[1], 24);
  PMPI_Type_free(&odd);

  // A struct of two basic types has no predefined reduction.
  MPI_Datatype mixed;
  const int lengths[] = {1, 1};
  const MPI_Aint displacements[] = {0, 8};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  ASSERT_EQ(PMPI_Type_create_struct(2, lengths, displacements, types, &mixed), MPI_SUCCESS);
  expect_refused(MPI_SUM, mixed);
  PMPI_Type_free(&mixed);
}

// inout = 10 * in + inout: the order of the operands shows.
MPI_Datatype seen_type = MPI_DATATYPE_NULL;
void shift_in(void* in, void* inout, int* len, MPI_Datatype* type) {
  seen_type = *type;
  for (int i = 0; i < *len; ++i) {
    static_cast<int*>(inout)[i] = 10 * static_cast<int*>(in)[i] + static_cast<int*>(inout)[i];
  }
}

TEST(UserOps, NonCommutativeOperandOrder) {
  MPI_Op op = MPI_OP_NULL;
  ASSERT_EQ(PMPI_Op_create(&shift_in, 0, &op), MPI_SUCCESS);
  int commute = -1;
  ASSERT_EQ(PMPI_Op_commutative(op, &commute), MPI_SUCCESS);
  EXPECT_EQ(commute, 0);
  EXPECT_TRUE(defined_for(op, MPI_DOUBLE_INT));
  const int in[3] = {1, 2, 3};
  int inout[3] = {4, 5, 6};
  ASSERT_EQ(PMPI_Reduce_local(in, inout, 3, MPI_INT, op), MPI_SUCCESS);
  EXPECT_EQ(inout[0], 14);
  EXPECT_EQ(inout[2], 36);
  EXPECT_EQ(seen_type, MPI_INT);
  ASSERT_EQ(PMPI_Op_free(&op), MPI_SUCCESS);
  EXPECT_EQ(op, MPI_OP_NULL);

  ASSERT_EQ(PMPI_Op_create(&shift_in, 1, &op), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Op_commutative(op, &commute), MPI_SUCCESS);
  EXPECT_EQ(commute, 1);
  PMPI_Op_free(&op);
  ASSERT_EQ(PMPI_Op_commutative(MPI_SUM, &commute), MPI_SUCCESS);
  EXPECT_EQ(commute, 1);
}

TEST(OpCalls, ErrorsInAJob) {
  std::atomic<int> checked{0};
  const int status = weft::testing::run_ranks(1, 1, [&](int) {
    weft::testing::errors_return();
    MPI_Op predefined = MPI_MAX;
    EXPECT_EQ(MPI_Op_free(&predefined), MPI_ERR_OP);
    EXPECT_EQ(predefined, MPI_MAX);
    MPI_Op null = MPI_OP_NULL;
    EXPECT_EQ(MPI_Op_free(&null), MPI_ERR_OP);
    float in[2] = {1, 2}, inout[2] = {3, 4};
    EXPECT_EQ(MPI_Reduce_local(in, inout, 1, MPI_FLOAT_INT, MPI_SUM), MPI_ERR_OP);
    EXPECT_EQ(MPI_Reduce_local(in, inout, 2, MPI_FLOAT, MPI_BAND), MPI_ERR_OP);
    EXPECT_EQ(inout[0], 3);
    EXPECT_EQ(MPI_Reduce_local(in, inout, 2, MPI_FLOAT, MPI_OP_NULL), MPI_ERR_OP);
    EXPECT_EQ(MPI_Reduce_local(in, inout, -1, MPI_FLOAT, MPI_SUM), MPI_ERR_COUNT);
    EXPECT_EQ(MPI_Reduce_local(in, inout, 2, MPI_FLOAT, MPI_SUM), MPI_SUCCESS);
    EXPECT_EQ(inout[1], 6);
    EXPECT_EQ(MPI_Op_create(nullptr, 1, &null), MPI_ERR_ARG);
    checked.fetch_add(1);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(checked.load(), 1);
}

}  // namespace

namespace {

// Fortran's named types reduce as their kind: INTEGER as an integer, LOGICAL logically only,
// CHARACTER not at all.
TEST(PredefinedOps, FortranNamedTypes) {
  integer_ops<int>(MPI_INTEGER, true);
  integer_ops<std::int64_t>(MPI_INTEGER8, true);
  integer_ops<__int128>(MPI_INTEGER16, true);
  // A sum past 64 bits keeps its high half.
  const __int128 big = static_cast<__int128>(1) << 100;
  expect_op<__int128>(MPI_SUM, MPI_INTEGER16, {big}, {big + 1},
                      [](__int128 a, __int128 b) { return a + b; });
  expect_op<int>(MPI_LAND, MPI_LOGICAL, {1, 0, 1}, {1, 1, 0},
                 [](int a, int b) { return a && b ? 1 : 0; });
  for (MPI_Op op : {MPI_SUM, MPI_MAX, MPI_BAND}) expect_refused(op, MPI_LOGICAL);
  for (MPI_Op op : {MPI_SUM, MPI_MAX, MPI_BAND, MPI_LAND}) expect_refused(op, MPI_CHARACTER);
  expect_op<double>(MPI_SUM, MPI_DOUBLE_PRECISION, {1.5, 2}, {2, 3},
                    [](double a, double b) { return a + b; });
}

}  // namespace
