// MPI_Type_match_size, MPI_Type_create_f90_integer/real/complex and MPI_Type_get_value_index:
// the type each picks, their combiners and contents, and that they are never freed.
#include <gtest/gtest.h>

#include <vector>

#include "mpi_test_util.h"

namespace {

void expect_envelope(MPI_Datatype type, int combiner, const std::vector<int>& integers, int types) {
  int ni = -1, na = -1, nt = -1, got = -1;
  ASSERT_EQ(MPI_Type_get_envelope(type, &ni, &na, &nt, &got), MPI_SUCCESS);
  EXPECT_EQ(got, combiner);
  EXPECT_EQ(na, 0);
  EXPECT_EQ(nt, types);
  std::vector<int> got_integers(static_cast<std::size_t>(ni));
  MPI_Datatype inner[2];
  ASSERT_EQ(MPI_Type_get_contents(type, ni, 0, nt, got_integers.data(), nullptr, inner),
            MPI_SUCCESS);
  EXPECT_EQ(got_integers, integers);
}

TEST(TypeMatching, SizesKindsAndPairs) {
  ASSERT_EQ(weft::testing::run_ranks(
                1, 1,
                [](int) {
                  weft::testing::errors_return();
                  MPI_Datatype t = MPI_DATATYPE_NULL;
                  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t), MPI_SUCCESS);
                  EXPECT_EQ(t, MPI_DOUBLE);
                  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &t), MPI_SUCCESS);
                  EXPECT_EQ(t, MPI_SHORT);
                  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t), MPI_SUCCESS);
                  EXPECT_EQ(t, MPI_C_DOUBLE_COMPLEX);
                  EXPECT_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);

                  MPI_Datatype real = MPI_DATATYPE_NULL, again = MPI_DATATYPE_NULL;
                  ASSERT_EQ(MPI_Type_create_f90_real(10, 100, &real), MPI_SUCCESS);
                  ASSERT_EQ(MPI_Type_create_f90_real(10, 100, &again), MPI_SUCCESS);
                  EXPECT_EQ(real, again);
                  int size = 0;
                  MPI_Type_size(real, &size);
                  EXPECT_EQ(size, 8);
                  expect_envelope(real, MPI_COMBINER_F90_REAL, {10, 100}, 0);
                  EXPECT_EQ(MPI_Type_free(&real), MPI_ERR_TYPE);

                  MPI_Datatype integer = MPI_DATATYPE_NULL;
                  ASSERT_EQ(MPI_Type_create_f90_integer(5, &integer), MPI_SUCCESS);
                  MPI_Type_size(integer, &size);
                  EXPECT_EQ(size, 4);
                  expect_envelope(integer, MPI_COMBINER_F90_INTEGER, {5}, 0);

                  MPI_Datatype complex = MPI_DATATYPE_NULL;
                  ASSERT_EQ(MPI_Type_create_f90_complex(5, MPI_UNDEFINED, &complex), MPI_SUCCESS);
                  MPI_Type_size(complex, &size);
                  EXPECT_EQ(size, 8);
                  EXPECT_EQ(MPI_Type_create_f90_real(40, 10, &t), MPI_ERR_ARG);

                  ASSERT_EQ(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t), MPI_SUCCESS);
                  EXPECT_EQ(t, MPI_DOUBLE_INT);
                  MPI_Datatype pair = MPI_DATATYPE_NULL;
                  ASSERT_EQ(MPI_Type_get_value_index(MPI_FLOAT, MPI_LONG, &pair), MPI_SUCCESS);
                  MPI_Aint lb = -1, extent = -1;
                  MPI_Type_get_extent(pair, &lb, &extent);
                  EXPECT_EQ(lb, 0);
                  EXPECT_EQ(extent, 16);  // {float; long;}
                  MPI_Type_size(pair, &size);
                  EXPECT_EQ(size, 12);
                  expect_envelope(pair, MPI_COMBINER_VALUE_INDEX, {}, 2);
                }),
            0);
}

}  // namespace
