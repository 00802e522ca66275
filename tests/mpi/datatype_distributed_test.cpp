// MPI_Type_create_subarray and MPI_Type_create_darray: bounds, type maps and contents against
// values checked with Open MPI 4.1 on the same arguments; argument errors.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "datatype/datatype.h"
#include "mpi.h"
#include "mpi_test_util.h"

namespace {

struct Shape {
  std::size_t size;
  MPI_Aint lb, extent, true_lb, true_extent;
};

void expect_shape(MPI_Datatype type, const Shape& expected) {
  MPI_Aint lb = -1, extent = -1, true_lb = -1, true_extent = -1;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  EXPECT_EQ(type->size(), expected.size);
  EXPECT_EQ(lb, expected.lb);
  EXPECT_EQ(extent, expected.extent);
  EXPECT_EQ(true_lb, expected.true_lb);
  EXPECT_EQ(true_extent, expected.true_extent);
}

// The ints one element of `type` selects from an array holding 0, 1, 2...
std::vector<int> int_map(MPI_Datatype type) {
  std::vector<int> memory(4096);
  std::iota(memory.begin(), memory.end(), 0);
  std::vector<int> packed(type->size() / sizeof(int));
  weft::mpi::pack(memory.data(), 1, *type, packed.data());
  return packed;
}

void expect_contents(MPI_Datatype type, int combiner, const std::vector<int>& integers) {
  int ni = -1, na = -1, nt = -1, got = -1;
  ASSERT_EQ(MPI_Type_get_envelope(type, &ni, &na, &nt, &got), MPI_SUCCESS);
  EXPECT_EQ(got, combiner);
  EXPECT_EQ(na, 0);
  ASSERT_EQ(nt, 1);
  std::vector<int> got_integers(static_cast<std::size_t>(ni));
  MPI_Datatype old = MPI_DATATYPE_NULL;
  ASSERT_EQ(MPI_Type_get_contents(type, ni, 0, 1, got_integers.data(), nullptr, &old), MPI_SUCCESS);
  EXPECT_EQ(got_integers, integers);
  EXPECT_EQ(old, MPI_INT);
}

TEST(Subarray, ThreeDimensionsInBothOrders) {
  const int sizes[] = {4, 5, 6}, subsizes[] = {2, 3, 2}, starts[] = {1, 2, 3};
  MPI_Datatype c = MPI_DATATYPE_NULL, fortran = MPI_DATATYPE_NULL;
  ASSERT_EQ(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &c),
            MPI_SUCCESS);
  expect_shape(c, {48, 0, 480, 180, 176});
  EXPECT_EQ(int_map(c), (std::vector<int>{45, 46, 51, 52, 57, 58, 75, 76, 81, 82, 87, 88}));
  expect_contents(c, MPI_COMBINER_SUBARRAY, {3, 4, 5, 6, 2, 3, 2, 1, 2, 3, MPI_ORDER_C});
  ASSERT_EQ(
      MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &fortran),
      MPI_SUCCESS);
  expect_shape(fortran, {48, 0, 480, 276, 120});
  EXPECT_EQ(int_map(fortran), (std::vector<int>{69, 70, 73, 74, 77, 78, 89, 90, 93, 94, 97, 98}));
  MPI_Type_free(&c);
  MPI_Type_free(&fortran);
}

TEST(Darray, BlockAndCyclicDistributions) {
  const int gsizes[] = {7, 9}, psizes[] = {2, 3};
  const int block_cyclic[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  const int dargs[] = {4, 3};
  MPI_Datatype t = MPI_DATATYPE_NULL;
  ASSERT_EQ(MPI_Type_create_darray(6, 5, 2, gsizes, block_cyclic, dargs, psizes, MPI_ORDER_FORTRAN,
                                   MPI_INT, &t),
            MPI_SUCCESS);
  expect_shape(t, {36, 0, 252, 184, 68});
  EXPECT_EQ(int_map(t), (std::vector<int>{46, 47, 48, 53, 54, 55, 60, 61, 62}));
  expect_contents(
      t, MPI_COMBINER_DARRAY,
      {6, 5, 2, 7, 9, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, 4, 3, 2, 3, MPI_ORDER_FORTRAN});
  MPI_Type_free(&t);

  const int cyclic_block[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
  ASSERT_EQ(MPI_Type_create_darray(6, 0, 2, gsizes, cyclic_block, dargs, psizes, MPI_ORDER_C,
                                   MPI_INT, &t),
            MPI_SUCCESS);
  expect_shape(t, {48, 0, 252, 0, 120});
  EXPECT_EQ(int_map(t), (std::vector<int>{0, 1, 2, 9, 10, 11, 18, 19, 20, 27, 28, 29}));
  MPI_Type_free(&t);

  const int gsizes3[] = {5, 4, 3}, psizes3[] = {1, 2, 1};
  const int none_block_none[] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE};
  const int defaults[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG,
                          MPI_DISTRIBUTE_DFLT_DARG};
  ASSERT_EQ(MPI_Type_create_darray(2, 1, 3, gsizes3, none_block_none, defaults, psizes3,
                                   MPI_ORDER_C, MPI_INT, &t),
            MPI_SUCCESS);
  expect_shape(t, {120, 0, 240, 24, 216});
  MPI_Type_free(&t);
}

TEST(Darray, ArgumentErrors) {
  ASSERT_EQ(weft::testing::run_ranks(
                1, 1,
                [](int) {
                  weft::testing::errors_return();
                  const int gsizes[] = {7, 9}, psizes[] = {2, 3};
                  const int block[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
                  const int small[] = {2, 3};  // 2 * 2 < 7
                  const int defaults[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
                  MPI_Datatype t = MPI_DATATYPE_NULL;
                  EXPECT_EQ(MPI_Type_create_darray(6, 0, 2, gsizes, block, small, psizes,
                                                   MPI_ORDER_C, MPI_INT, &t),
                            MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Type_create_darray(5, 0, 2, gsizes, block, defaults, psizes,
                                                   MPI_ORDER_C, MPI_INT, &t),
                            MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Type_create_darray(6, 6, 2, gsizes, block, defaults, psizes,
                                                   MPI_ORDER_C, MPI_INT, &t),
                            MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Type_create_darray(6, 0, 2, gsizes, block, defaults, psizes, 3,
                                                   MPI_INT, &t),
                            MPI_ERR_ARG);
                  const int sizes[] = {4}, subsizes[] = {3}, starts[] = {2};
                  EXPECT_EQ(MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C,
                                                     MPI_INT, &t),
                            MPI_ERR_ARG);
                }),
            0);
}

}  // namespace
