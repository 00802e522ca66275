// Collectives on derived datatypes. Each rank builds its own type objects (as every MPI program
// does), so members describe the same layout with different handles; types on the two sides of a
// transfer may differ as long as their signatures agree. Bytes between a type's blocks must stay
// untouched.
#include <cstddef>

#include "collective_testing.h"

namespace weft::mpi::testing {
namespace {

class CollectiveDatatype : public ::testing::TestWithParam<Shape> {};

// Every other int: element k covers ints 3k and 3k + 2 of the buffer (extent 3 ints), so int
// 3k + 1 is a gap.
MPI_Datatype strided_pair() {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_vector(2, 1, 2, MPI_INT, &type);
  MPI_Datatype resized = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(type, 0, 3 * sizeof(int), &resized);
  MPI_Type_free(&type);
  MPI_Type_commit(&resized);
  return resized;
}

bool in_gap(std::size_t i) {
  return i % 3 == 1;
}

TEST_P(CollectiveDatatype, StridedVectorAgainstPlainInts) {
  run_ranks(GetParam(), [](int rank, int size) {
    MPI_Datatype pair = strided_pair();
    // Bcast: the root sends 5 strided pairs, the others receive 10 plain ints.
    const int root = size - 1;
    std::vector<int> strided(15, -1);
    for (std::size_t i = 0; i < strided.size(); ++i) {
      if (!in_gap(i)) strided[i] = static_cast<int>(i);
    }
    std::vector<int> plain(10, -1);
    if (rank == root) {
      MPI_Bcast(strided.data(), 5, pair, root, MPI_COMM_WORLD);
    } else {
      MPI_Bcast(plain.data(), 10, MPI_INT, root, MPI_COMM_WORLD);
      // Plain element j is the j-th non-gap int: 0, 2, 3, 5, 6, ...
      expect_elements(
          plain, [](std::size_t j) { return int(j / 2 * 3 + j % 2 * 2); },
          "Bcast strided to plain");
    }

    // Allreduce over many strided pairs (several chunks): gaps keep their -1.
    const std::size_t count = 20'000;
    std::vector<int> mine(3 * count, -1);
    std::vector<int> sum(3 * count, -1);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (!in_gap(i)) mine[i] = value(rank, i);
    }
    MPI_Allreduce(mine.data(), sum.data(), static_cast<int>(count), pair, MPI_SUM, MPI_COMM_WORLD);
    auto summed = [&](std::size_t i) {
      return in_gap(i) ? -1 : 1000 * size * (size - 1) / 2 + size * static_cast<int>(i % 1000);
    };
    expect_elements(sum, summed, "Allreduce of strided pairs");
    MPI_Allreduce(MPI_IN_PLACE, mine.data(), static_cast<int>(count), pair, MPI_SUM,
                  MPI_COMM_WORLD);
    expect_elements(mine, summed, "Allreduce of strided pairs in place");

    // Alltoall: one strided pair to each rank, two plain ints from each.
    std::vector<int> send(3 * size, -1);
    for (int r = 0; r < size; ++r) {
      send[3 * r] = rank * 100 + r;
      send[3 * r + 2] = -(rank * 100 + r);
    }
    std::vector<int> recv(2 * size, 0);
    MPI_Alltoall(send.data(), 1, pair, recv.data(), 2, MPI_INT, MPI_COMM_WORLD);
    expect_elements(
        recv,
        [&](std::size_t i) {
          const int from = int(i / 2);
          return i % 2 == 0 ? from * 100 + rank : -(from * 100 + rank);
        },
        "Alltoall strided to plain");
    MPI_Type_free(&pair);
  });
}

struct Particle {
  int id;
  double mass;
  bool operator==(const Particle&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Particle& p) {
  return out << "{" << p.id << ", " << p.mass << "}";
}

MPI_Datatype particle_type() {
  const int lengths[2] = {1, 1};
  const MPI_Aint displs[2] = {offsetof(Particle, id), offsetof(Particle, mass)};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_create_struct(2, lengths, displs, types, &type);
  MPI_Datatype resized = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(type, 0, sizeof(Particle), &resized);
  MPI_Type_free(&type);
  MPI_Type_commit(&resized);
  return resized;
}

TEST_P(CollectiveDatatype, StructParticles) {
  run_ranks(GetParam(), [](int rank, int size) {
    MPI_Datatype particle = particle_type();
    auto make = [](int r, std::size_t i) {
      return Particle{value(r, i), r + 0.125 * static_cast<double>(i)};
    };
    const Particle mine[2] = {make(rank, 0), make(rank, 1)};
    std::vector<Particle> all(2 * size, Particle{-1, -1.0});
    MPI_Allgather(mine, 2, particle, all.data(), 2, particle, MPI_COMM_WORLD);
    expect_elements(
        all, [&](std::size_t i) { return make(int(i / 2), i % 2); }, "Allgather of particles");

    const int root = size / 2;
    std::vector<Particle> gathered(rank == root ? 2 * size : 0, Particle{-1, -1.0});
    MPI_Gather(mine, 2, particle, gathered.data(), 2, particle, root, MPI_COMM_WORLD);
    if (rank == root) {
      expect_elements(
          gathered, [&](std::size_t i) { return make(int(i / 2), i % 2); }, "Gather of particles");
    }
    MPI_Type_free(&particle);
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, CollectiveDatatype, ::testing::ValuesIn(kShapes), shape_name);

}  // namespace
}  // namespace weft::mpi::testing
