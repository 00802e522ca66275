// Copies between layouts of one signature (no packing in between), chunked copies, pack/unpack
// round trips, MPI_Pack/MPI_Unpack in a job, messages of derived types, and argument errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <vector>

#include "datatype/datatype.h"
#include "mpi_test_util.h"

namespace {

using weft::mpi::copy;
using weft::mpi::copy_range;
using weft::testing::errors_return;
using weft::testing::run_ranks;

std::vector<int> iota_ints(std::size_t n, int first = 0) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// A type freed when the test ends.
struct Owned {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (type != MPI_DATATYPE_NULL) PMPI_Type_free(&type);
  }
  MPI_Datatype* operator&() { return &type; }
  operator MPI_Datatype() const { return type; }
  const weft_mpi_datatype& operator*() const { return *type; }
};

TEST(Copy, VectorToContiguousAndBack) {
  Owned vector;
  ASSERT_EQ(PMPI_Type_vector(3, 2, 4, MPI_INT, &vector), MPI_SUCCESS);
  const std::vector<int> src = iota_ints(12);
  std::vector<int> packed(6, -1);
  EXPECT_EQ(copy(src.data(), 1, *vector, packed.data(), 6, *MPI_INT), 24u);
  EXPECT_EQ(packed, (std::vector<int>{0, 1, 4, 5, 8, 9}));

  std::vector<int> back(12, -1);
  EXPECT_EQ(copy(packed.data(), 6, *MPI_INT, back.data(), 1, *vector), 24u);
  EXPECT_EQ(back, (std::vector<int>{0, 1, -1, -1, 4, 5, -1, -1, 8, 9, -1, -1}));
}

TEST(Copy, StructToIndexed) {
  // Source: {int @0, 2 ints @8 bytes}, extent 16: ints 0 2 3 | 4 6 7.
  Owned s;
  const int lengths[] = {1, 2};
  const MPI_Aint displacements[] = {0, 8};
  const MPI_Datatype types[] = {MPI_INT, MPI_INT};
  ASSERT_EQ(PMPI_Type_create_struct(2, lengths, displacements, types, &s), MPI_SUCCESS);
  // Destination: ints 5 1 2, extent 5 ints: 5 1 2 | 10 6 7.
  Owned indexed;
  const int one[] = {1, 1, 1};
  const int where[] = {5, 1, 2};
  ASSERT_EQ(PMPI_Type_indexed(3, one, where, MPI_INT, &indexed), MPI_SUCCESS);
  const std::vector<int> src = iota_ints(8, 100);
  std::vector<int> dst(12, -1);
  EXPECT_EQ(copy(src.data(), 2, *s, dst.data(), 2, *indexed), 24u);
  EXPECT_EQ(dst, (std::vector<int>{-1, 102, 103, -1, -1, 100, 106, 107, -1, -1, 104, -1}));
}

TEST(Copy, MovesTheShorterStream) {
  const std::vector<int> src = iota_ints(10);
  std::vector<int> dst(6, -1);
  EXPECT_EQ(copy(src.data(), 10, *MPI_INT, dst.data(), 4, *MPI_INT), 16u);
  EXPECT_EQ(dst, (std::vector<int>{0, 1, 2, 3, -1, -1}));
  // A type split at a different place on each side: 2 x (3 ints) into 3 x (2 of 4 ints).
  Owned three, sparse;
  ASSERT_EQ(PMPI_Type_contiguous(3, MPI_INT, &three), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_vector(2, 1, 2, MPI_INT, &sparse), MPI_SUCCESS);
  Owned sparse_resized;
  ASSERT_EQ(PMPI_Type_create_resized(sparse, 0, 16, &sparse_resized), MPI_SUCCESS);
  std::vector<int> out(12, -1);
  EXPECT_EQ(copy(src.data(), 2, *three, out.data(), 3, *sparse_resized), 24u);
  EXPECT_EQ(out, (std::vector<int>{0, -1, 1, -1, 2, -1, 3, -1, 4, -1, 5, -1}));
}

TEST(Copy, ChunkedRangesEqualTheWholeCopy) {
  Owned vector, indexed;
  ASSERT_EQ(PMPI_Type_vector(3, 2, 3, MPI_SHORT, &vector), MPI_SUCCESS);  // 12 bytes of data
  const int lengths[] = {1, 3, 2};
  const int where[] = {7, 0, 4};
  ASSERT_EQ(PMPI_Type_indexed(3, lengths, where, MPI_SHORT, &indexed), MPI_SUCCESS);
  std::vector<short> src(40);
  std::iota(src.begin(), src.end(), short{1});
  std::vector<short> whole(40, 0);
  const std::size_t total = copy(src.data(), 4, *vector, whole.data(), 4, *indexed);
  ASSERT_EQ(total, 48u);
  for (std::size_t chunk = 1; chunk <= 13; ++chunk) {
    std::vector<short> pieces(40, 0);
    std::size_t moved = 0;
    for (std::size_t offset = 0; offset < total + chunk; offset += chunk) {
      moved += copy_range(src.data(), 4, *vector, pieces.data(), 4, *indexed, offset, chunk);
    }
    EXPECT_EQ(moved, total) << "chunk " << chunk;
    EXPECT_EQ(pieces, whole) << "chunk " << chunk;
  }
  EXPECT_EQ(copy_range(src.data(), 4, *vector, whole.data(), 4, *indexed, 46, 10), 2u);
  EXPECT_EQ(copy_range(src.data(), 4, *vector, whole.data(), 4, *indexed, 48, 10), 0u);
}

struct ShortInt {
  short value;
  int index;
};

TEST(Copy, PairTypesPackWithoutTheirPadding) {
  ShortInt src[3] = {{1, 10}, {2, 20}, {3, 30}};
  std::vector<char> packed(18);
  weft::mpi::pack(src, 3, *MPI_SHORT_INT, packed.data());
  short s = 0;
  int i = 0;
  std::memcpy(&s, packed.data() + 6, sizeof s);
  std::memcpy(&i, packed.data() + 8, sizeof i);
  EXPECT_EQ(s, 2);
  EXPECT_EQ(i, 20);
  ShortInt back[3] = {};
  weft::mpi::unpack(packed.data(), packed.size(), back, 3, *MPI_SHORT_INT);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(back[k].value, src[k].value);
    EXPECT_EQ(back[k].index, src[k].index);
  }
}

TEST(Copy, NegativeLowerBoundsAndAbsoluteAddresses) {
  // Ints at 0 and -3 (in ints); the extent is 4 ints, so element 1 starts 4 ints further.
  Owned backwards;
  ASSERT_EQ(PMPI_Type_vector(2, 1, -3, MPI_INT, &backwards), MPI_SUCCESS);
  std::vector<int> memory = iota_ints(20);
  std::vector<int> out(4, -1);
  copy(memory.data() + 5, 2, *backwards, out.data(), 4, *MPI_INT);
  EXPECT_EQ(out, (std::vector<int>{5, 2, 9, 6}));

  // A type of absolute addresses used from MPI_BOTTOM.
  int a = 7;
  double b = 2.5;
  MPI_Aint addresses[2];
  PMPI_Get_address(&a, &addresses[0]);
  PMPI_Get_address(&b, &addresses[1]);
  const int lengths[] = {1, 1};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  Owned absolute;
  ASSERT_EQ(PMPI_Type_create_struct(2, lengths, addresses, types, &absolute), MPI_SUCCESS);
  std::vector<char> packed(12);
  weft::mpi::pack(MPI_BOTTOM, 1, *absolute, packed.data());
  int got_a = 0;
  double got_b = 0;
  std::memcpy(&got_a, packed.data(), 4);
  std::memcpy(&got_b, packed.data() + 4, 8);
  EXPECT_EQ(got_a, 7);
  EXPECT_EQ(got_b, 2.5);
}

TEST(Copy, LargeContiguousCopy) {
  const std::vector<int> src = iota_ints(1 << 18);
  std::vector<int> dst(src.size(), 0);
  Owned block;
  ASSERT_EQ(PMPI_Type_contiguous(1024, MPI_INT, &block), MPI_SUCCESS);
  EXPECT_TRUE(block.type->contiguous());
  EXPECT_EQ(copy(src.data(), 256, *block, dst.data(), src.size(), *MPI_INT), src.size() * 4);
  EXPECT_EQ(dst, src);
}

TEST(PackCalls, RoundTripThroughOneBuffer) {
  const int status = run_ranks(1, 1, [](int) {
    MPI_Datatype vector;
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vector);
    MPI_Type_commit(&vector);
    const double values[5] = {1.5, -1, 2.5, -1, 3.5};
    const int ints[2] = {4, 5};
    int vector_bytes = 0, int_bytes = 0;
    EXPECT_EQ(MPI_Pack_size(1, vector, MPI_COMM_WORLD, &vector_bytes), MPI_SUCCESS);
    EXPECT_EQ(MPI_Pack_size(2, MPI_INT, MPI_COMM_WORLD, &int_bytes), MPI_SUCCESS);
    EXPECT_EQ(vector_bytes, 24);
    EXPECT_EQ(int_bytes, 8);
    std::vector<char> buffer(static_cast<std::size_t>(vector_bytes + int_bytes));
    int position = 0;
    const int size = static_cast<int>(buffer.size());
    EXPECT_EQ(MPI_Pack(values, 1, vector, buffer.data(), size, &position, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(position, 24);
    EXPECT_EQ(MPI_Pack(ints, 2, MPI_INT, buffer.data(), size, &position, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(position, 32);

    double unpacked[3] = {};
    int unpacked_ints[2] = {};
    position = 0;
    EXPECT_EQ(MPI_Unpack(buffer.data(), size, &position, unpacked, 3, MPI_DOUBLE, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Unpack(buffer.data(), size, &position, unpacked_ints, 2, MPI_INT, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(position, 32);
    EXPECT_EQ(unpacked[0], 1.5);
    EXPECT_EQ(unpacked[1], 2.5);
    EXPECT_EQ(unpacked[2], 3.5);
    EXPECT_EQ(unpacked_ints[1], 5);
    MPI_Type_free(&vector);
  });
  EXPECT_EQ(status, 0);
}

TEST(Messages, AVectorArrivesAsAnIndexedType) {
  weft::testing::Shared<std::atomic<int>> checked(0);
  const int status = run_ranks(2, 2, [&](int rank) {
    if (rank == 0) {
      MPI_Datatype vector;
      MPI_Type_vector(4, 1, 3, MPI_INT, &vector);
      MPI_Type_commit(&vector);
      const std::vector<int> data = iota_ints(12);
      MPI_Send(data.data(), 1, vector, 1, 0, MPI_COMM_WORLD);
      MPI_Type_free(&vector);
      return;
    }
    MPI_Datatype indexed;
    const int lengths[] = {2, 2};
    const int where[] = {6, 0};
    MPI_Type_indexed(2, lengths, where, MPI_INT, &indexed);
    MPI_Type_commit(&indexed);
    std::vector<int> got(8, -1);
    MPI_Status st;
    MPI_Recv(got.data(), 1, indexed, 0, 0, MPI_COMM_WORLD, &st);
    EXPECT_EQ(got, (std::vector<int>{6, 9, -1, -1, -1, -1, 0, 3}));
    int count = -1;
    MPI_Get_count(&st, indexed, &count);
    EXPECT_EQ(count, 1);
    MPI_Type_free(&indexed);
    checked->fetch_add(1);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(checked->load(), 1);
}

TEST(Errors, ArgumentsAreCheckedWithTheirClass) {
  const int status = run_ranks(1, 1, [](int) {
    errors_return();
    MPI_Datatype t = MPI_DATATYPE_NULL;
    EXPECT_EQ(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT_EQ(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT_EQ(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT_EQ(MPI_Type_contiguous(2, MPI_INT, nullptr), MPI_ERR_ARG);
    const int lengths[] = {1, 1};
    const MPI_Aint displacements[] = {0, 8};
    const MPI_Datatype types[] = {MPI_INT, MPI_DATATYPE_NULL};
    EXPECT_EQ(MPI_Type_create_struct(2, lengths, displacements, types, &t), MPI_ERR_TYPE);
    EXPECT_EQ(MPI_Type_indexed(2, nullptr, nullptr, MPI_INT, &t), MPI_ERR_ARG);

    MPI_Datatype predefined = MPI_INT;
    EXPECT_EQ(MPI_Type_free(&predefined), MPI_ERR_TYPE);
    EXPECT_EQ(predefined, MPI_INT);
    int ni, na, nt, combiner;
    EXPECT_EQ(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &combiner), MPI_SUCCESS);
    EXPECT_EQ(MPI_Type_get_contents(MPI_INT, 0, 0, 0, nullptr, nullptr, nullptr), MPI_ERR_TYPE);

    ASSERT_EQ(MPI_Type_contiguous(2, MPI_INT, &t), MPI_SUCCESS);
    int integers[1];
    MPI_Datatype inner[1];
    EXPECT_EQ(MPI_Type_get_contents(t, 0, 0, 1, integers, nullptr, inner), MPI_ERR_ARG);
    // Not committed: communication and packing refuse it.
    const int values[2] = {1, 2};
    char buffer[8];
    int position = 0;
    EXPECT_EQ(MPI_Pack(values, 1, t, buffer, 8, &position, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Type_commit(&t);
    EXPECT_EQ(MPI_Pack(values, 1, t, buffer, 8, &position, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(MPI_Pack(values, 1, t, buffer, 8, &position, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    position = -1;
    EXPECT_EQ(MPI_Pack(values, 1, t, buffer, 8, &position, MPI_COMM_WORLD), MPI_ERR_ARG);
    position = 4;
    int out[2];
    EXPECT_EQ(MPI_Unpack(buffer, 8, &position, out, 1, t, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    EXPECT_EQ(MPI_Type_free(&t), MPI_SUCCESS);
    EXPECT_EQ(MPI_Type_free(&t), MPI_ERR_TYPE);
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
