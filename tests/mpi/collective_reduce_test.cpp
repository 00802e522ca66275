// The reducing collectives (Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan): predefined
// operations on several types, counts small (one member reduces) and large (chunks reduced by
// many), MPI_IN_PLACE, and a non-commutative user operation whose result shows the rank order.
#include <algorithm>

#include "collective_testing.h"

namespace weft::mpi::testing {
namespace {

class Reduction : public ::testing::TestWithParam<Shape> {};

// The sum over ranks 0..size-1 of value(r, i).
int value_sum(int size, std::size_t i) {
  return 1000 * size * (size - 1) / 2 + size * static_cast<int>(i % 1000);
}

TEST_P(Reduction, ReduceSumAtEveryKindOfRoot) {
  run_ranks(GetParam(), [](int rank, int size) {
    for (int root : {0, size - 1, size / 2}) {
      std::vector<int> mine(5);
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(rank, i);
      std::vector<int> sum(5, -1);
      EXPECT_EQ(MPI_Reduce(mine.data(), sum.data(), 5, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
                MPI_SUCCESS);
      if (rank == root) {
        expect_elements(
            sum, [&](std::size_t i) { return value_sum(size, i); }, "Reduce");
        MPI_Reduce(MPI_IN_PLACE, mine.data(), 5, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        expect_elements(
            mine, [&](std::size_t i) { return value_sum(size, i); }, "Reduce in place");
      } else {
        expect_elements(
            sum, [](std::size_t) { return -1; }, "Reduce leaves non-roots alone");
        MPI_Reduce(mine.data(), nullptr, 5, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
      }
    }
  });
}

TEST_P(Reduction, AllreduceSumOfManyDoublesIsSharedAmongMembers) {
  run_ranks(GetParam(), [](int rank, int size) {
    // 800 KB: split into as many chunks as there are ranks, up to 97.
    const std::size_t count = 100'000;
    std::vector<double> mine(count);
    for (std::size_t i = 0; i < count; ++i) mine[i] = rank + 0.5 * static_cast<double>(i);
    auto expected = [&](std::size_t i) {
      return size * (size - 1) / 2.0 + size * 0.5 * static_cast<double>(i);
    };
    std::vector<double> sum(count, -1.0);
    MPI_Allreduce(mine.data(), sum.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
    expect_elements(sum, expected, "Allreduce");
    MPI_Allreduce(MPI_IN_PLACE, mine.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
    expect_elements(mine, expected, "Allreduce in place");
  });
}

TEST_P(Reduction, AllreduceMaxAndMaxloc) {
  run_ranks(GetParam(), [](int rank, int size) {
    // Values that tie across ranks, so that MAXLOC must pick the lowest rank among the maxima.
    auto score = [](int r, std::size_t i) { return (r * 7 + static_cast<int>(i)) % 5; };
    constexpr std::size_t kCount = 6;
    std::vector<int> mine(kCount);
    std::vector<int> pairs(2 * kCount);
    struct DoubleInt {
      double value;
      int index;
    };
    std::vector<DoubleInt> double_pairs(kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
      mine[i] = score(rank, i);
      pairs[2 * i] = score(rank, i);
      pairs[2 * i + 1] = rank;
      double_pairs[i] = {score(rank, i) + 0.25, rank};
    }
    std::vector<int> best_value(kCount, -1);
    std::vector<int> best_rank(kCount, -1);
    for (std::size_t i = 0; i < kCount; ++i) {
      for (int r = 0; r < size; ++r) {
        if (score(r, i) > best_value[i]) {
          best_value[i] = score(r, i);
          best_rank[i] = r;
        }
      }
    }

    std::vector<int> max(kCount, -1);
    MPI_Allreduce(mine.data(), max.data(), kCount, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    expect_elements(
        max, [&](std::size_t i) { return best_value[i]; }, "MAX");

    MPI_Allreduce(MPI_IN_PLACE, pairs.data(), kCount, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    expect_elements(
        pairs, [&](std::size_t i) { return i % 2 == 0 ? best_value[i / 2] : best_rank[i / 2]; },
        "MAXLOC on MPI_2INT");

    std::vector<DoubleInt> double_max(kCount, {-1.0, -1});
    MPI_Allreduce(double_pairs.data(), double_max.data(), kCount, MPI_DOUBLE_INT, MPI_MAXLOC,
                  MPI_COMM_WORLD);
    for (std::size_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(double_max[i].value, best_value[i] + 0.25) << "MAXLOC on MPI_DOUBLE_INT " << i;
      EXPECT_EQ(double_max[i].index, best_rank[i]) << "MAXLOC on MPI_DOUBLE_INT " << i;
    }
  });
}

// x -> a x + b, with wrap-around arithmetic. Composition in rank order ("f, then g") is
// associative but not commutative, so a result shows the order the members were combined in.
struct Affine {
  unsigned a;
  unsigned b;
  bool operator==(const Affine&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Affine& f) {
  return out << "(" << f.a << ", " << f.b << ")";
}

Affine then(Affine f, Affine g) {
  return {g.a * f.a, g.a * f.b + g.b};
}

// MPI's order: inout = in op inout, `in` coming from the lower rank.
void compose(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* first = static_cast<const Affine*>(in);
  auto* second = static_cast<Affine*>(inout);
  for (int i = 0; i < *len; ++i) second[i] = then(first[i], second[i]);
}

Affine affine(int r, std::size_t i) {
  return {2u * static_cast<unsigned>(r) + 3u + static_cast<unsigned>(i % 5),
          static_cast<unsigned>(r) * 7u + static_cast<unsigned>(i)};
}

// affine(first, i), then ..., then affine(last, i).
Affine composed(int first, int last, std::size_t i) {
  Affine result{1, 0};
  for (int r = first; r <= last; ++r) result = then(result, affine(r, i));
  return result;
}

TEST_P(Reduction, NonCommutativeOperationCombinesInRankOrder) {
  run_ranks(GetParam(), [](int rank, int size) {
    MPI_Op op = MPI_OP_NULL;
    EXPECT_EQ(MPI_Op_create(compose, 0, &op), MPI_SUCCESS);
    // Pairs of unsigned ints travel as MPI_2INT (same size and alignment).
    for (std::size_t count : {std::size_t{3}, std::size_t{20'000}}) {
      const std::string size_text = " of " + std::to_string(count);
      std::vector<Affine> mine(count);
      for (std::size_t i = 0; i < count; ++i) mine[i] = affine(rank, i);
      const int n = static_cast<int>(count);

      std::vector<Affine> all(count, Affine{0, 0});
      MPI_Allreduce(mine.data(), all.data(), n, MPI_2INT, op, MPI_COMM_WORLD);
      expect_elements(
          all, [&](std::size_t i) { return composed(0, size - 1, i); }, "Allreduce" + size_text);

      const int root = size / 2;
      std::vector<Affine> reduced = mine;
      MPI_Reduce(rank == root ? MPI_IN_PLACE : mine.data(), reduced.data(), n, MPI_2INT, op, root,
                 MPI_COMM_WORLD);
      if (rank == root) {
        expect_elements(
            reduced, [&](std::size_t i) { return composed(0, size - 1, i); },
            "Reduce in place" + size_text);
      }

      std::vector<Affine> prefix(count, Affine{0, 0});
      MPI_Scan(mine.data(), prefix.data(), n, MPI_2INT, op, MPI_COMM_WORLD);
      expect_elements(
          prefix, [&](std::size_t i) { return composed(0, rank, i); }, "Scan" + size_text);

      std::vector<Affine> exclusive = mine;
      MPI_Exscan(MPI_IN_PLACE, exclusive.data(), n, MPI_2INT, op, MPI_COMM_WORLD);
      // Rank 0's buffer is left as it was.
      expect_elements(
          exclusive, [&](std::size_t i) { return rank == 0 ? mine[i] : composed(0, rank - 1, i); },
          "Exscan in place" + size_text);
    }
    MPI_Op_free(&op);
  });
}

TEST_P(Reduction, ScanAndExscanSum) {
  run_ranks(GetParam(), [](int rank, int size) {
    (void)size;
    std::vector<int> mine(4);
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(rank, i);
    auto prefix = [](int last, std::size_t i) { return value_sum(last + 1, i); };

    std::vector<int> inclusive(4, -1);
    MPI_Scan(mine.data(), inclusive.data(), 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_elements(
        inclusive, [&](std::size_t i) { return prefix(rank, i); }, "Scan");

    std::vector<int> in_place = mine;
    MPI_Scan(MPI_IN_PLACE, in_place.data(), 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_elements(
        in_place, [&](std::size_t i) { return prefix(rank, i); }, "Scan in place");

    std::vector<int> exclusive(4, -7);
    MPI_Exscan(mine.data(), exclusive.data(), 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_elements(
        exclusive, [&](std::size_t i) { return rank == 0 ? -7 : prefix(rank - 1, i); }, "Exscan");
  });
}

TEST_P(Reduction, ReduceScatterBlockAndReduceScatter) {
  run_ranks(GetParam(), [](int rank, int size) {
    constexpr int kBlock = 3;
    std::vector<int> mine(kBlock * size);
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(rank, i);
    auto block_sum = [&](std::size_t i) { return value_sum(size, kBlock * rank + i); };

    std::vector<int> block(kBlock, -1);
    MPI_Reduce_scatter_block(mine.data(), block.data(), kBlock, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_elements(block, block_sum, "Reduce_scatter_block");

    std::vector<int> in_place = mine;
    MPI_Reduce_scatter_block(MPI_IN_PLACE, in_place.data(), kBlock, MPI_INT, MPI_SUM,
                             MPI_COMM_WORLD);
    in_place.resize(kBlock);
    expect_elements(in_place, block_sum, "Reduce_scatter_block in place");

    // Rank r gets (r + 2) % 4 elements.
    std::vector<int> counts(size);
    int total = 0;
    int first = 0;
    for (int r = 0; r < size; ++r) {
      if (r == rank) first = total;
      total += counts[r] = (r + 2) % 4;
    }
    std::vector<int> input(total);
    for (int i = 0; i < total; ++i) input[i] = value(rank, i);
    auto varying_sum = [&](std::size_t i) { return value_sum(size, first + i); };
    std::vector<int> mine_out(counts[rank], -1);
    MPI_Reduce_scatter(input.data(), mine_out.data(), counts.data(), MPI_INT, MPI_SUM,
                       MPI_COMM_WORLD);
    expect_elements(mine_out, varying_sum, "Reduce_scatter");

    MPI_Reduce_scatter(MPI_IN_PLACE, input.data(), counts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    input.resize(counts[rank]);
    expect_elements(input, varying_sum, "Reduce_scatter in place");
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, Reduction, ::testing::ValuesIn(kShapes), shape_name);

}  // namespace
}  // namespace weft::mpi::testing
