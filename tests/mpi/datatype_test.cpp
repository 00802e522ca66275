// Datatypes without ranks: the predefined ones, every constructor against its hand-computed type
// map (size, bounds, true bounds, envelope and contents), names, commit, free and references.
#include "datatype/datatype.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "datatype/datatype_layout.h"
#include "mpi.h"

namespace {

struct Bounds {
  MPI_Count size;
  MPI_Aint lb;
  MPI_Aint extent;
  MPI_Aint true_lb;
  MPI_Aint true_extent;
};

void expect_bounds(MPI_Datatype type, const Bounds& expected) {
  int size = -1;
  MPI_Count size_x = -1;
  MPI_Aint lb = -1, extent = -1, true_lb = -1, true_extent = -1;
  MPI_Count lb_x = -1, extent_x = -1, true_lb_x = -1, true_extent_x = -1;
  ASSERT_EQ(PMPI_Type_size(type, &size), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_size_x(type, &size_x), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_get_extent(type, &lb, &extent), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_get_extent_x(type, &lb_x, &extent_x), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_get_true_extent(type, &true_lb, &true_extent), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_get_true_extent_x(type, &true_lb_x, &true_extent_x), MPI_SUCCESS);
  EXPECT_EQ(size, expected.size);
  EXPECT_EQ(size_x, expected.size);
  EXPECT_EQ(lb, expected.lb);
  EXPECT_EQ(lb_x, expected.lb);
  EXPECT_EQ(extent, expected.extent);
  EXPECT_EQ(extent_x, expected.extent);
  EXPECT_EQ(true_lb, expected.true_lb);
  EXPECT_EQ(true_lb_x, expected.true_lb);
  EXPECT_EQ(true_extent, expected.true_extent);
  EXPECT_EQ(true_extent_x, expected.true_extent);
}

void expect_contents(MPI_Datatype type, int combiner, const std::vector<int>& integers,
                     const std::vector<MPI_Aint>& addresses,
                     const std::vector<MPI_Datatype>& types) {
  int ni = -1, na = -1, nt = -1, got_combiner = -1;
  ASSERT_EQ(PMPI_Type_get_envelope(type, &ni, &na, &nt, &got_combiner), MPI_SUCCESS);
  EXPECT_EQ(got_combiner, combiner);
  ASSERT_EQ(ni, static_cast<int>(integers.size()));
  ASSERT_EQ(na, static_cast<int>(addresses.size()));
  ASSERT_EQ(nt, static_cast<int>(types.size()));
  if (combiner == MPI_COMBINER_NAMED) return;  // a predefined type has no contents
  std::vector<int> got_integers(integers.size() + 1);
  std::vector<MPI_Aint> got_addresses(addresses.size() + 1);
  std::vector<MPI_Datatype> got_types(types.size() + 1);
  ASSERT_EQ(PMPI_Type_get_contents(type, ni, na, nt, got_integers.data(), got_addresses.data(),
                                   got_types.data()),
            MPI_SUCCESS);
  got_integers.pop_back();
  got_addresses.pop_back();
  got_types.pop_back();
  EXPECT_EQ(got_integers, integers);
  EXPECT_EQ(got_addresses, addresses);
  EXPECT_EQ(got_types, types);
  for (MPI_Datatype& t : got_types) {
    if (!t->predefined()) PMPI_Type_free(&t);
  }
}

// The type map of `count` elements of an int-based type, as int displacements in type-map order:
// packing an array whose ints hold their own index (the origin in the middle of it, for negative
// displacements).
std::vector<int> int_map(MPI_Datatype type, int count = 1) {
  std::vector<int> memory(4096);
  std::iota(memory.begin(), memory.end(), -2048);
  std::vector<int> packed(static_cast<std::size_t>(count) * type->size() / sizeof(int));
  weft::mpi::pack(memory.data() + 2048, static_cast<std::size_t>(count), *type, packed.data());
  return packed;
}

MPI_Datatype committed(MPI_Datatype type) {
  EXPECT_EQ(PMPI_Type_commit(&type), MPI_SUCCESS);
  return type;
}

TEST(PredefinedTypes, SizesBoundsAndNames) {
  expect_bounds(MPI_INT, {4, 0, 4, 0, 4});
  expect_bounds(MPI_CHAR, {1, 0, 1, 0, 1});
  expect_bounds(MPI_BYTE, {1, 0, 1, 0, 1});
  expect_bounds(MPI_PACKED, {1, 0, 1, 0, 1});
  expect_bounds(MPI_DOUBLE, {8, 0, 8, 0, 8});
  expect_bounds(MPI_LONG_DOUBLE, {16, 0, 16, 0, 16});
  expect_bounds(MPI_C_DOUBLE_COMPLEX, {16, 0, 16, 0, 16});
  expect_bounds(MPI_C_BOOL, {1, 0, 1, 0, 1});
  expect_bounds(MPI_WCHAR, {sizeof(wchar_t), 0, sizeof(wchar_t), 0, sizeof(wchar_t)});
  expect_bounds(MPI_AINT, {8, 0, 8, 0, 8});
  // The pair types are the C structs {value; int}, padding included in the extent.
  expect_bounds(MPI_FLOAT_INT, {8, 0, 8, 0, 8});
  expect_bounds(MPI_2INT, {8, 0, 8, 0, 8});
  expect_bounds(MPI_DOUBLE_INT, {12, 0, 16, 0, 12});
  expect_bounds(MPI_LONG_INT, {12, 0, 16, 0, 12});
  expect_bounds(MPI_SHORT_INT, {6, 0, 8, 0, 8});
  expect_bounds(MPI_LONG_DOUBLE_INT, {20, 0, 32, 0, 20});

  EXPECT_TRUE(MPI_INT->predefined());
  EXPECT_TRUE(MPI_INT->committed());
  EXPECT_TRUE(MPI_INT->contiguous());
  EXPECT_TRUE(MPI_FLOAT_INT->contiguous());
  EXPECT_FALSE(MPI_DOUBLE_INT->contiguous());
  EXPECT_FALSE(MPI_SHORT_INT->contiguous());
  EXPECT_EQ(MPI_INT->basic(), MPI_INT);
  EXPECT_EQ(MPI_INT->basic_count(), 1u);
  EXPECT_EQ(MPI_DOUBLE_INT->basic(), nullptr);
  EXPECT_EQ(MPI_LONG_LONG, MPI_LONG_LONG_INT);

  char name[MPI_MAX_OBJECT_NAME];
  int length = -1;
  ASSERT_EQ(PMPI_Type_get_name(MPI_UNSIGNED_LONG, name, &length), MPI_SUCCESS);
  EXPECT_STREQ(name, "MPI_UNSIGNED_LONG");
  EXPECT_EQ(length, 17);
  EXPECT_EQ(MPI_2INT->name(), "MPI_2INT");
  EXPECT_EQ(MPI_INTEGER16->name(), "MPI_INTEGER16");
  EXPECT_EQ(MPI_C_FLOAT_COMPLEX->name(), "MPI_C_COMPLEX");
  EXPECT_EQ(MPI_INTEGER16->size(), 16u);
  expect_contents(MPI_INT, MPI_COMBINER_NAMED, {}, {}, {});
}

TEST(Constructors, Contiguous) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_contiguous(3, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_FALSE(t->committed());
  EXPECT_FALSE(t->predefined());
  expect_bounds(t, {12, 0, 12, 0, 12});
  EXPECT_TRUE(t->contiguous());
  EXPECT_EQ(t->basic(), MPI_INT);
  EXPECT_EQ(t->basic_count(), 3u);
  EXPECT_EQ(int_map(t, 2), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  expect_contents(t, MPI_COMBINER_CONTIGUOUS, {3}, {}, {MPI_INT});
  ASSERT_EQ(PMPI_Type_free(&t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DATATYPE_NULL);

  ASSERT_EQ(PMPI_Type_contiguous(0, MPI_INT, &t), MPI_SUCCESS);
  expect_bounds(t, {0, 0, 0, 0, 0});
  PMPI_Type_free(&t);
}

TEST(Constructors, Vector) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  // Ints at 0 1, 4 5, 8 9 (in ints).
  ASSERT_EQ(PMPI_Type_vector(3, 2, 4, MPI_INT, &t), MPI_SUCCESS);
  expect_bounds(t, {24, 0, 40, 0, 40});
  EXPECT_FALSE(t->contiguous());
  EXPECT_EQ(int_map(t, 2), (std::vector<int>{0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19}));
  expect_contents(t, MPI_COMBINER_VECTOR, {3, 2, 4}, {}, {MPI_INT});
  PMPI_Type_free(&t);

  // A negative stride: ints at 0 then -3; the lower bound is the lowest.
  ASSERT_EQ(PMPI_Type_vector(2, 1, -3, MPI_INT, &t), MPI_SUCCESS);
  expect_bounds(t, {8, -12, 16, -12, 16});
  EXPECT_EQ(int_map(t), (std::vector<int>{0, -3}));
  PMPI_Type_free(&t);

  // Stride equal to the block: one contiguous block.
  ASSERT_EQ(PMPI_Type_vector(4, 2, 2, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_TRUE(t->contiguous());
  PMPI_Type_free(&t);
}

TEST(Constructors, RepeatedPeriodsStayCompact) {
  MPI_Datatype column = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_vector(1000000, 1, 2, MPI_DOUBLE, &column), MPI_SUCCESS);
  expect_bounds(column, {8000000, 0, 15999992, 0, 15999992});
  EXPECT_EQ(column->layout->block_count, 1u);
  EXPECT_EQ(column->basic_count(), 1000000u);
  // Three of a two-int vector, then a vector of those: the map of the whole.
  MPI_Datatype pair = MPI_DATATYPE_NULL, three = MPI_DATATYPE_NULL, nested = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_vector(2, 1, 2, MPI_INT, &pair), MPI_SUCCESS);  // ints 0 2, extent 3
  ASSERT_EQ(PMPI_Type_contiguous(3, pair, &three), MPI_SUCCESS);
  expect_bounds(three, {24, 0, 36, 0, 36});
  EXPECT_EQ(int_map(three), (std::vector<int>{0, 2, 3, 5, 6, 8}));
  EXPECT_EQ(three->layout->block_count, 2u);
  ASSERT_EQ(PMPI_Type_create_hvector(2, 1, -40, three, &nested), MPI_SUCCESS);
  expect_bounds(nested, {48, -40, 76, -40, 76});
  EXPECT_EQ(int_map(nested, 2),
            (std::vector<int>{0,  2,  3,  5,  6,  8,  -10, -8, -7, -5, -4, -2,
                              19, 21, 22, 24, 25, 27, 9,   11, 12, 14, 15, 17}));
  // A stride equal to the block: one block, no repetition.
  MPI_Datatype dense = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_contiguous(1000, MPI_INT, &dense), MPI_SUCCESS);
  EXPECT_TRUE(dense->contiguous());
  for (MPI_Datatype* t : {&column, &pair, &three, &nested, &dense}) PMPI_Type_free(t);
}

TEST(Constructors, Hvector) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  // Doubles at bytes 0 and 10.
  ASSERT_EQ(PMPI_Type_create_hvector(2, 1, 10, MPI_DOUBLE, &t), MPI_SUCCESS);
  expect_bounds(t, {16, 0, 18, 0, 18});
  expect_contents(t, MPI_COMBINER_HVECTOR, {2, 1}, {10}, {MPI_DOUBLE});
  PMPI_Type_free(&t);

  ASSERT_EQ(PMPI_Type_create_hvector(3, 1, 8, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_EQ(int_map(t), (std::vector<int>{0, 2, 4}));
  expect_bounds(t, {12, 0, 20, 0, 20});
  PMPI_Type_free(&t);
}

TEST(Constructors, Indexed) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  const int lengths[] = {2, 1};
  const int displacements[] = {3, 0};
  ASSERT_EQ(PMPI_Type_indexed(2, lengths, displacements, MPI_INT, &t), MPI_SUCCESS);
  expect_bounds(t, {12, 0, 20, 0, 20});
  EXPECT_EQ(int_map(t, 2), (std::vector<int>{3, 4, 0, 8, 9, 5}));
  expect_contents(t, MPI_COMBINER_INDEXED, {2, 2, 1, 3, 0}, {}, {MPI_INT});
  PMPI_Type_free(&t);
}

TEST(Constructors, Hindexed) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  const int lengths[] = {1, 2};
  const MPI_Aint displacements[] = {8, 0};
  ASSERT_EQ(PMPI_Type_create_hindexed(2, lengths, displacements, MPI_INT, &t), MPI_SUCCESS);
  expect_bounds(t, {12, 0, 12, 0, 12});
  // Extent equals size, but the type map is out of order: not one block.
  EXPECT_FALSE(t->contiguous());
  EXPECT_EQ(int_map(t, 2), (std::vector<int>{2, 0, 1, 5, 3, 4}));
  expect_contents(t, MPI_COMBINER_HINDEXED, {2, 1, 2}, {8, 0}, {MPI_INT});
  PMPI_Type_free(&t);
}

TEST(Constructors, IndexedBlock) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  const int displacements[] = {4, 0, 2};
  ASSERT_EQ(PMPI_Type_create_indexed_block(3, 1, displacements, MPI_INT, &t), MPI_SUCCESS);
  expect_bounds(t, {12, 0, 20, 0, 20});
  EXPECT_EQ(int_map(t), (std::vector<int>{4, 0, 2}));
  expect_contents(t, MPI_COMBINER_INDEXED_BLOCK, {3, 1, 4, 0, 2}, {}, {MPI_INT});
  PMPI_Type_free(&t);
}

TEST(Constructors, HindexedBlock) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  const MPI_Aint displacements[] = {0, 20};
  ASSERT_EQ(PMPI_Type_create_hindexed_block(2, 2, displacements, MPI_SHORT, &t), MPI_SUCCESS);
  expect_bounds(t, {8, 0, 24, 0, 24});
  expect_contents(t, MPI_COMBINER_HINDEXED_BLOCK, {2, 2}, {0, 20}, {MPI_SHORT});
  PMPI_Type_free(&t);
}

TEST(Constructors, StructPadsTheExtentToTheAlignment) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  {
    // struct {int; char;}: 5 bytes of data, extent 8 like sizeof.
    const int lengths[] = {1, 1};
    const MPI_Aint displacements[] = {0, 4};
    const MPI_Datatype types[] = {MPI_INT, MPI_CHAR};
    ASSERT_EQ(PMPI_Type_create_struct(2, lengths, displacements, types, &t), MPI_SUCCESS);
    expect_bounds(t, {5, 0, 8, 0, 5});
    EXPECT_EQ(t->basic(), nullptr);
    expect_contents(t, MPI_COMBINER_STRUCT, {2, 1, 1}, {0, 4}, {MPI_INT, MPI_CHAR});
    PMPI_Type_free(&t);
  }
  {
    // struct {double; char;}: extent 16.
    const int lengths[] = {1, 1};
    const MPI_Aint displacements[] = {0, 8};
    const MPI_Datatype types[] = {MPI_DOUBLE, MPI_CHAR};
    ASSERT_EQ(PMPI_Type_create_struct(2, lengths, displacements, types, &t), MPI_SUCCESS);
    expect_bounds(t, {9, 0, 16, 0, 9});
    PMPI_Type_free(&t);
  }
  {
    // Two ints and one more at 12 bytes: one basic type repeated three times.
    const int lengths[] = {2, 1};
    const MPI_Aint displacements[] = {0, 12};
    const MPI_Datatype types[] = {MPI_INT, MPI_INT};
    ASSERT_EQ(PMPI_Type_create_struct(2, lengths, displacements, types, &t), MPI_SUCCESS);
    expect_bounds(t, {12, 0, 16, 0, 16});
    EXPECT_EQ(t->basic(), MPI_INT);
    EXPECT_EQ(t->basic_count(), 3u);
    EXPECT_EQ(int_map(t, 2), (std::vector<int>{0, 1, 3, 4, 5, 7}));
    PMPI_Type_free(&t);
  }
}

// Found by datatype_fuzz (corpus/datatype_fuzz/regress_empty_member_alignment): an empty type
// built from ints padded a struct that holds it to the alignment of int, though no int is in the
// struct's type map.
TEST(Constructors, StructPadsToTheAlignmentOfItsTypeMapOnly) {
  MPI_Datatype empty = MPI_DATATYPE_NULL, t = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_contiguous(0, MPI_DOUBLE, &empty), MPI_SUCCESS);
  const int lengths[] = {1, 3};
  const MPI_Aint displacements[] = {0, 0};
  const MPI_Datatype types[] = {MPI_SHORT, empty};
  ASSERT_EQ(PMPI_Type_create_struct(2, lengths, displacements, types, &t), MPI_SUCCESS);
  expect_bounds(t, {2, 0, 2, 0, 2});
  PMPI_Type_free(&t);
  PMPI_Type_free(&empty);
}

// Found by datatype_fuzz (corpus/datatype_fuzz/regress_empty_vector_of_resized): a vector of no
// elements of a resized type kept the resized type's explicit bounds, so that repeating it
// spread its zero-width bounds over the repetitions.
TEST(Constructors, NoElementsOfAResizedTypeHaveNoBounds) {
  MPI_Datatype resized = MPI_DATATYPE_NULL, empty = MPI_DATATYPE_NULL, t = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_create_resized(MPI_INT, -8, 32, &resized), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_create_hvector(0, 1, 4, resized, &empty), MPI_SUCCESS);
  expect_bounds(empty, {0, 0, 0, 0, 0});
  ASSERT_EQ(PMPI_Type_create_hvector(4, 1, 2, empty, &t), MPI_SUCCESS);
  expect_bounds(t, {0, 0, 0, 0, 0});
  PMPI_Type_free(&t);
  PMPI_Type_free(&empty);
  PMPI_Type_free(&resized);
}

TEST(Constructors, ResizedBoundsAreKeptByStruct) {
  MPI_Datatype resized = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_create_resized(MPI_INT, -4, 12, &resized), MPI_SUCCESS);
  expect_bounds(resized, {4, -4, 12, 0, 4});
  expect_contents(resized, MPI_COMBINER_RESIZED, {}, {-4, 12}, {MPI_INT});

  MPI_Datatype two = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_contiguous(2, resized, &two), MPI_SUCCESS);
  // Ints at 0 and 12 bytes; bounds from -4 to 20.
  expect_bounds(two, {8, -4, 24, 0, 16});
  EXPECT_EQ(int_map(two), (std::vector<int>{0, 3}));

  // An explicit extent inside a struct is not padded to the int alignment.
  MPI_Datatype odd = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_create_resized(MPI_INT, 0, 6, &odd), MPI_SUCCESS);
  const int lengths[] = {1};
  const MPI_Aint displacements[] = {0};
  MPI_Datatype s = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_create_struct(1, lengths, displacements, &odd, &s), MPI_SUCCESS);
  expect_bounds(s, {4, 0, 6, 0, 4});
  for (MPI_Datatype* t : {&resized, &two, &odd, &s}) PMPI_Type_free(t);
}

// MPICH's datatype/lbub: a type resized to a negative extent has its upper bound below its lower
// one, and a count of it still has the lowest lower bound and the highest upper bound.
TEST(Constructors, NegativeExtentsRepeat) {
  MPI_Datatype four = MPI_DATATYPE_NULL, backwards = MPI_DATATYPE_NULL, three = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_contiguous(4, MPI_BYTE, &four), MPI_SUCCESS);
  // {(LB,6), 4*(BYTE,0), (UB,-3)}
  ASSERT_EQ(PMPI_Type_create_resized(four, 6, -9, &backwards), MPI_SUCCESS);
  expect_bounds(backwards, {4, 6, -9, 0, 4});
  // Copies at 0, -9 and -18: lower bounds 6, -3, -12; upper bounds -3, -12, -21.
  ASSERT_EQ(PMPI_Type_contiguous(3, backwards, &three), MPI_SUCCESS);
  expect_bounds(three, {12, -12, 9, -18, 22});
  MPI_Datatype vector = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_vector(2, 1, 1, backwards, &vector), MPI_SUCCESS);
  // Copies at 0 and -9: lower bounds 6, -3; upper bounds -3, -12.
  expect_bounds(vector, {8, -3, 0, -9, 13});
  for (MPI_Datatype* t : {&four, &backwards, &three, &vector}) PMPI_Type_free(t);
}

// MPICH's datatype/indexed_misc keeps using a freed handle after making its next type, relying on
// MPICH's handle pool giving the new type the handle just freed (Open MPI's allocator does too).
TEST(Lifetime, TheNextTypeGetsTheHandleJustFreed) {
  MPI_Datatype first = MPI_DATATYPE_NULL, outer = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_vector(2, 1, 3, MPI_INT, &first), MPI_SUCCESS);
  const int outer_lengths[] = {1, 1};
  const MPI_Aint outer_displacements[] = {0, 32};
  const MPI_Datatype outer_types[] = {first, MPI_INT};
  ASSERT_EQ(PMPI_Type_create_struct(2, outer_lengths, outer_displacements, outer_types, &outer),
            MPI_SUCCESS);
  const MPI_Datatype stale = first;
  EXPECT_EQ(int_map(outer), (std::vector<int>{0, 3, 8}));
  ASSERT_EQ(PMPI_Type_free(&outer), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_free(&first), MPI_SUCCESS);
  // What the program allocates in between does not matter.
  const auto unrelated = std::make_unique<MPI_Datatype>(MPI_INT);
  MPI_Datatype next = MPI_DATATYPE_NULL;
  const int lengths[] = {0, 4, 0};
  const MPI_Aint displacements[] = {1 << 30, 8, 1 << 30};
  ASSERT_EQ(PMPI_Type_create_hindexed(3, lengths, displacements, MPI_INT, &next), MPI_SUCCESS);
  EXPECT_EQ(next, stale);
  expect_bounds(stale, {16, 8, 16, 8, 16});
  PMPI_Type_free(&next);
}

TEST(Constructors, DupKeepsTheTypeMapAndCommitState) {
  MPI_Datatype vector = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_vector(2, 1, 3, MPI_INT, &vector), MPI_SUCCESS);
  MPI_Datatype uncommitted_dup = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_dup(vector, &uncommitted_dup), MPI_SUCCESS);
  EXPECT_FALSE(uncommitted_dup->committed());
  ASSERT_EQ(PMPI_Type_commit(&vector), MPI_SUCCESS);
  MPI_Datatype dup = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_dup(vector, &dup), MPI_SUCCESS);
  EXPECT_TRUE(dup->committed());
  expect_bounds(dup, {8, 0, 16, 0, 16});
  EXPECT_EQ(int_map(dup), (std::vector<int>{0, 3}));
  expect_contents(dup, MPI_COMBINER_DUP, {}, {}, {vector});
  MPI_Datatype predefined_dup = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_dup(MPI_DOUBLE_INT, &predefined_dup), MPI_SUCCESS);
  expect_bounds(predefined_dup, {12, 0, 16, 0, 12});
  EXPECT_FALSE(predefined_dup->predefined());
  for (MPI_Datatype* t : {&vector, &uncommitted_dup, &dup, &predefined_dup}) PMPI_Type_free(t);
}

TEST(Constructors, NestedTypes) {
  // A vector of structs {int @0, int @8}: element extent 12 (padded from 12), stride 2 structs.
  const int lengths[] = {1, 1};
  const MPI_Aint displacements[] = {0, 8};
  const MPI_Datatype types[] = {MPI_INT, MPI_INT};
  MPI_Datatype s = MPI_DATATYPE_NULL, v = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_create_struct(2, lengths, displacements, types, &s), MPI_SUCCESS);
  expect_bounds(s, {8, 0, 12, 0, 12});
  ASSERT_EQ(PMPI_Type_vector(2, 1, 2, s, &v), MPI_SUCCESS);
  expect_bounds(v, {16, 0, 36, 0, 36});
  EXPECT_EQ(int_map(v), (std::vector<int>{0, 2, 6, 8}));
  EXPECT_EQ(v->basic(), MPI_INT);
  EXPECT_EQ(v->basic_count(), 4u);
  // The struct outlives its handle while the vector uses it.
  PMPI_Type_free(&s);
  EXPECT_EQ(int_map(v), (std::vector<int>{0, 2, 6, 8}));
  MPI_Datatype inner[1];
  int integers[3];
  ASSERT_EQ(PMPI_Type_get_contents(v, 3, 0, 1, integers, nullptr, inner), MPI_SUCCESS);
  expect_bounds(inner[0], {8, 0, 12, 0, 12});
  PMPI_Type_free(&inner[0]);
  PMPI_Type_free(&v);
}

TEST(Lifetime, APendingOperationKeepsAFreedType) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_contiguous(5, MPI_SHORT, &t), MPI_SUCCESS);
  t = committed(t);
  MPI_Datatype held = t;
  held->retain();
  ASSERT_EQ(PMPI_Type_free(&t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DATATYPE_NULL);
  EXPECT_EQ(held->size(), 10u);
  EXPECT_TRUE(held->committed());
  held->release();
}

TEST(Names, SetGetAndTruncate) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  ASSERT_EQ(PMPI_Type_contiguous(2, MPI_INT, &t), MPI_SUCCESS);
  char name[MPI_MAX_OBJECT_NAME];
  int length = -1;
  ASSERT_EQ(PMPI_Type_get_name(t, name, &length), MPI_SUCCESS);
  EXPECT_EQ(length, 0);
  EXPECT_STREQ(name, "");
  ASSERT_EQ(PMPI_Type_set_name(t, "pair of ints"), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_get_name(t, name, &length), MPI_SUCCESS);
  EXPECT_STREQ(name, "pair of ints");
  EXPECT_EQ(length, 12);
  EXPECT_EQ(t->name(), "pair of ints");
  const std::string long_name(300, 'x');
  ASSERT_EQ(PMPI_Type_set_name(t, long_name.c_str()), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Type_get_name(t, name, &length), MPI_SUCCESS);
  EXPECT_EQ(length, MPI_MAX_OBJECT_NAME - 1);
  EXPECT_EQ(std::strlen(name), static_cast<std::size_t>(MPI_MAX_OBJECT_NAME - 1));
  PMPI_Type_free(&t);
}

TEST(Addresses, GetAddressAndArithmetic) {
  int values[4] = {};
  MPI_Aint first = 0, third = 0;
  ASSERT_EQ(PMPI_Get_address(&values[0], &first), MPI_SUCCESS);
  ASSERT_EQ(PMPI_Get_address(&values[2], &third), MPI_SUCCESS);
  EXPECT_EQ(PMPI_Aint_diff(third, first), 8);
  EXPECT_EQ(PMPI_Aint_add(first, 8), third);
  EXPECT_EQ(MPI_Aint_diff(first, third), -8);
}

}  // namespace
