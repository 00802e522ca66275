// MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size: external32's big-endian
// bytes and sizes for predefined types (long double as IEEE binary128), derived types that mix
// C types, round trips, and the errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mpi_test_util.h"

namespace {

using Bytes = std::vector<unsigned char>;

template <class T>
Bytes pack(const std::vector<T>& data, MPI_Datatype type, int count) {
  MPI_Aint size = -1;
  EXPECT_EQ(MPI_Pack_external_size("external32", count, type, &size), MPI_SUCCESS);
  Bytes out(static_cast<std::size_t>(size));
  MPI_Aint position = 0;
  EXPECT_EQ(MPI_Pack_external("external32", data.data(), count, type, out.data(), size, &position),
            MPI_SUCCESS);
  EXPECT_EQ(position, size);
  return out;
}

TEST(External32, PredefinedTypesAreBigEndianWithTheStandardSizes) {
  ASSERT_EQ(weft::testing::run_ranks(
                1, 1,
                [](int) {
                  EXPECT_EQ(pack(std::vector<int>{1, -2}, MPI_INT, 2),
                            (Bytes{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe}));
                  EXPECT_EQ(pack(std::vector<float>{1.0f, 2.0f}, MPI_FLOAT, 2),
                            (Bytes{0x3f, 0x80, 0, 0, 0x40, 0, 0, 0}));
                  EXPECT_EQ(pack(std::vector<std::int16_t>{0x0102}, MPI_INT16_T, 1), (Bytes{1, 2}));
                  // 1.0 as IEEE binary128: sign 0, exponent 0x3fff, fraction 0.
                  Bytes one(16, 0);
                  one[0] = 0x3f;
                  one[1] = 0xff;
                  const Bytes long_one = pack(std::vector<long double>{1.0L}, MPI_LONG_DOUBLE, 1);
                  EXPECT_EQ(long_one, one);
                  // A C bool holding 2 is true: external32 says 1.
                  std::vector<unsigned char> flags = {2, 0};
                  EXPECT_EQ(pack(flags, MPI_C_BOOL, 2), (Bytes{1, 0}));
                  // MPI_DOUBLE_INT: 8 + 4 bytes, no padding.
                  struct {
                    double value;
                    int index;
                  } pair[1] = {{2.0, 3}};
                  MPI_Aint size = 0;
                  MPI_Pack_external_size("external32", 1, MPI_DOUBLE_INT, &size);
                  EXPECT_EQ(size, 12);
                  Bytes out(12);
                  MPI_Aint position = 0;
                  MPI_Pack_external("external32", pair, 1, MPI_DOUBLE_INT, out.data(), 12,
                                    &position);
                  EXPECT_EQ(out, (Bytes{0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3}));
                }),
            0);
}

TEST(External32, MixedStructRoundTrip) {
  ASSERT_EQ(
      weft::testing::run_ranks(
          1, 1,
          [](int) {
            struct Record {
              char tag;
              double value;
              short count;
              long double wide;
            };
            const int lengths[] = {1, 1, 1, 1};
            const MPI_Aint displacements[] = {offsetof(Record, tag), offsetof(Record, value),
                                              offsetof(Record, count), offsetof(Record, wide)};
            const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_LONG_DOUBLE};
            MPI_Datatype record = MPI_DATATYPE_NULL;
            ASSERT_EQ(MPI_Type_create_struct(4, lengths, displacements, types, &record),
                      MPI_SUCCESS);
            MPI_Type_commit(&record);
            MPI_Aint size = 0;
            MPI_Pack_external_size("external32", 2, record, &size);
            EXPECT_EQ(size, 2 * (1 + 8 + 2 + 16));
            const Record in[2] = {{'a', 1.5, 7, -3.25L}, {'b', -2.0, -1, 1e300L}};
            Bytes packed(static_cast<std::size_t>(size));
            MPI_Aint position = 0;
            ASSERT_EQ(
                MPI_Pack_external("external32", in, 2, record, packed.data(), size, &position),
                MPI_SUCCESS);
            EXPECT_EQ(packed[0], 'a');
            EXPECT_EQ(packed[1], 0x3f);  // 1.5 = 0x3ff8...
            EXPECT_EQ(packed[2], 0xf8);
            EXPECT_EQ(packed[9], 0);  // 7 as a big-endian short
            EXPECT_EQ(packed[10], 7);
            Record out[2] = {};
            position = 0;
            ASSERT_EQ(
                MPI_Unpack_external("external32", packed.data(), size, &position, out, 2, record),
                MPI_SUCCESS);
            EXPECT_EQ(position, size);
            for (int i = 0; i < 2; ++i) {
              EXPECT_EQ(out[i].tag, in[i].tag);
              EXPECT_EQ(out[i].value, in[i].value);
              EXPECT_EQ(out[i].count, in[i].count);
              EXPECT_EQ(out[i].wide, in[i].wide);
            }
            MPI_Type_free(&record);
          }),
      0);
}

TEST(External32, Errors) {
  ASSERT_EQ(weft::testing::run_ranks(
                1, 1,
                [](int) {
                  weft::testing::errors_return();
                  int data[2] = {1, 2};
                  unsigned char out[8];
                  MPI_Aint position = 0;
                  MPI_Aint size = 0;
                  EXPECT_EQ(MPI_Pack_external_size("native", 1, MPI_INT, &size), MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Pack_external("external32", data, 2, MPI_INT, out, 7, &position),
                            MPI_ERR_TRUNCATE);
                  EXPECT_EQ(position, 0);
                }),
            0);
}

}  // namespace
