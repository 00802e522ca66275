// The data-moving collectives (Barrier, Bcast, Gather(v), Scatter(v), Allgather(v),
// Alltoall(v,w)) at several job shapes, with MPI_IN_PLACE where MPI-3.1 allows it; every result
// is checked against values computed here from closed formulas.
#include <atomic>
#include <numeric>

#include "collective_testing.h"

namespace weft::mpi::testing {
namespace {

class Collective : public ::testing::TestWithParam<Shape> {};

// The count of arrivals is shared by every rank, in whichever process it runs.
TEST_P(Collective, BarrierLetsNobodyPassBeforeEveryoneArrived) {
  weft::testing::Shared<std::atomic<int>> arrived(0);
  run_ranks(GetParam(), [&](int, int size) {
    for (int round = 1; round <= 20; ++round) {
      arrived->fetch_add(1);
      MPI_Barrier(MPI_COMM_WORLD);
      EXPECT_EQ(arrived->load(), round * size) << "round " << round;
      // A second barrier keeps the next round's arrivals out of this round's check.
      MPI_Barrier(MPI_COMM_WORLD);
    }
  });
}

TEST_P(Collective, BcastFromEveryKindOfRoot) {
  run_ranks(GetParam(), [](int rank, int size) {
    for (int root : {0, size - 1, size / 2}) {
      std::vector<int> data(37, -1);
      if (rank == root) {
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(root, i);
      }
      EXPECT_EQ(MPI_Bcast(data.data(), 37, MPI_INT, root, MPI_COMM_WORLD), MPI_SUCCESS);
      expect_elements(
          data, [&](std::size_t i) { return value(root, i); },
          "Bcast from " + std::to_string(root));
    }
    // Large enough that every reader copies many pages.
    std::vector<double> big(1 << 17, rank == size - 1 ? 0.0 : -1.0);
    if (rank == size - 1) std::iota(big.begin(), big.end(), 0.5);
    MPI_Bcast(big.data(), static_cast<int>(big.size()), MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
    expect_elements(
        big, [](std::size_t i) { return static_cast<double>(i) + 0.5; }, "big Bcast");
    EXPECT_EQ(MPI_Bcast(nullptr, 0, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  });
}

TEST_P(Collective, GatherAndGatherv) {
  run_ranks(GetParam(), [](int rank, int size) {
    const int root = size / 2;
    std::vector<int> mine(3);
    for (std::size_t i = 0; i < 3; ++i) mine[i] = value(rank, i);
    std::vector<int> all(rank == root ? 3 * size : 0, -1);
    MPI_Gather(mine.data(), 3, MPI_INT, all.data(), 3, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root) {
      expect_elements(
          all, [](std::size_t i) { return value(int(i / 3), i % 3); }, "Gather");
    }

    // In place: the root's block is already where it belongs.
    if (rank == root) {
      std::fill(all.begin(), all.end(), -1);
      std::copy(mine.begin(), mine.end(), all.begin() + 3 * root);
      MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), 3, MPI_INT, root, MPI_COMM_WORLD);
      expect_elements(
          all, [](std::size_t i) { return value(int(i / 3), i % 3); }, "Gather in place");
    } else {
      MPI_Gather(mine.data(), 3, MPI_INT, nullptr, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    }

    // Rank r sends r % 4 elements; the root leaves a one-element gap after each block.
    std::vector<int> counts(size);
    std::vector<int> displs(size);
    int next = 0;
    for (int r = 0; r < size; ++r) {
      counts[r] = r % 4;
      displs[r] = next;
      next += counts[r] + 1;
    }
    std::vector<int> varying(rank == root ? next : 0, -1);
    MPI_Gatherv(mine.data(), rank % 4, MPI_INT, varying.data(), counts.data(), displs.data(),
                MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root) {
      std::vector<int> expected(next, -1);
      for (int r = 0; r < size; ++r) {
        for (int i = 0; i < counts[r]; ++i) expected[displs[r] + i] = value(r, i);
      }
      expect_elements(
          varying, [&](std::size_t i) { return expected[i]; }, "Gatherv");
    }
  });
}

TEST_P(Collective, ScatterAndScatterv) {
  run_ranks(GetParam(), [](int rank, int size) {
    const int root = size - 1;
    std::vector<int> all;
    if (rank == root) {
      for (int r = 0; r < size; ++r) {
        for (std::size_t i = 0; i < 4; ++i) all.push_back(value(r, i));
      }
    }
    std::vector<int> mine(4, -1);
    MPI_Scatter(all.data(), 4, MPI_INT, mine.data(), 4, MPI_INT, root, MPI_COMM_WORLD);
    expect_elements(
        mine, [&](std::size_t i) { return value(rank, i); }, "Scatter");

    // In place at the root: its own block stays in its send buffer, untouched.
    if (rank == root) {
      MPI_Scatter(all.data(), 4, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
      expect_elements(
          all, [](std::size_t i) { return value(int(i / 4), i % 4); }, "Scatter in place");
    } else {
      std::fill(mine.begin(), mine.end(), -1);
      MPI_Scatter(nullptr, 0, MPI_DATATYPE_NULL, mine.data(), 4, MPI_INT, root, MPI_COMM_WORLD);
      expect_elements(
          mine, [&](std::size_t i) { return value(rank, i); }, "Scatter to non-root");
    }

    // Rank r receives (r + 1) % 5 elements, taken from the root's buffer back to front.
    std::vector<int> counts(size);
    std::vector<int> displs(size);
    int total = 0;
    for (int r = 0; r < size; ++r) total += counts[r] = (r + 1) % 5;
    int end = total;
    for (int r = 0; r < size; ++r) displs[r] = end -= counts[r];
    std::vector<int> source(rank == root ? total : 0);
    std::iota(source.begin(), source.end(), 100);
    std::vector<int> got((rank + 1) % 5, -1);
    MPI_Scatterv(source.data(), counts.data(), displs.data(), MPI_INT, got.data(),
                 static_cast<int>(got.size()), MPI_INT, root, MPI_COMM_WORLD);
    int first = total;
    for (int r = 0; r <= rank; ++r) first -= counts[r];
    expect_elements(
        got, [&](std::size_t i) { return 100 + first + int(i); }, "Scatterv");
  });
}

// Blocks large enough that every member copies its own, instead of the last one to arrive
// copying them all.
TEST_P(Collective, GatherAndScatterLargeBlocks) {
  run_ranks(GetParam(), [](int rank, int size) {
    constexpr std::size_t kBlock = 5000;
    const int root = size - 1;
    std::vector<int> mine(kBlock);
    for (std::size_t i = 0; i < kBlock; ++i) mine[i] = value(rank, i);
    std::vector<int> all(rank == root ? kBlock * size : 0, -1);
    MPI_Gather(mine.data(), kBlock, MPI_INT, all.data(), kBlock, MPI_INT, root, MPI_COMM_WORLD);
    auto expected = [](std::size_t i) { return value(int(i / kBlock), i % kBlock); };
    if (rank == root) expect_elements(all, expected, "large Gather");

    std::vector<int> back(kBlock, -1);
    MPI_Scatter(all.data(), kBlock, MPI_INT, back.data(), kBlock, MPI_INT, root, MPI_COMM_WORLD);
    expect_elements(
        back, [&](std::size_t i) { return value(rank, i); }, "large Scatter");
  });
}

TEST_P(Collective, AllgatherAndAllgatherv) {
  run_ranks(GetParam(), [](int rank, int size) {
    const int mine[2] = {value(rank, 0), value(rank, 1)};
    std::vector<int> all(2 * size, -1);
    MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD);
    auto expected = [](std::size_t i) { return value(int(i / 2), i % 2); };
    expect_elements(all, expected, "Allgather");

    std::fill(all.begin(), all.end(), -1);
    all[2 * rank] = mine[0];
    all[2 * rank + 1] = mine[1];
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), 2, MPI_INT, MPI_COMM_WORLD);
    expect_elements(all, expected, "Allgather in place");

    // Rank r contributes r % 3 elements (some none), packed in rank order.
    std::vector<int> counts(size);
    std::vector<int> displs(size);
    int total = 0;
    for (int r = 0; r < size; ++r) {
      counts[r] = r % 3;
      displs[r] = total;
      total += counts[r];
    }
    std::vector<int> varying(total, -1);
    MPI_Allgatherv(mine, rank % 3, MPI_INT, varying.data(), counts.data(), displs.data(), MPI_INT,
                   MPI_COMM_WORLD);
    std::vector<int> want;
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < counts[r]; ++i) want.push_back(value(r, i));
    }
    expect_elements(
        varying, [&](std::size_t i) { return want[i]; }, "Allgatherv");

    std::fill(varying.begin(), varying.end(), -1);
    for (int i = 0; i < counts[rank]; ++i) varying[displs[rank] + i] = mine[i];
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, varying.data(), counts.data(), displs.data(),
                   MPI_INT, MPI_COMM_WORLD);
    expect_elements(
        varying, [&](std::size_t i) { return want[i]; }, "Allgatherv in place");
  });
}

// What rank `from` sends rank `to` as element i of an all-to-all.
int pair_value(int from, int to, int size, std::size_t i) {
  return value(from * size + to, i);
}

TEST_P(Collective, Alltoall) {
  run_ranks(GetParam(), [](int rank, int size) {
    constexpr int kBlock = 3;
    std::vector<int> send(kBlock * size);
    for (std::size_t i = 0; i < send.size(); ++i) {
      send[i] = pair_value(rank, int(i / kBlock), size, i % kBlock);
    }
    auto expected = [&](std::size_t i) {
      return pair_value(int(i / kBlock), rank, size, i % kBlock);
    };
    std::vector<int> recv(send.size(), -1);
    MPI_Alltoall(send.data(), kBlock, MPI_INT, recv.data(), kBlock, MPI_INT, MPI_COMM_WORLD);
    expect_elements(recv, expected, "Alltoall");

    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, send.data(), kBlock, MPI_INT, MPI_COMM_WORLD);
    expect_elements(send, expected, "Alltoall in place");
  });
}

// Rank `from` sends (from + to) % 3 elements to rank `to`.
int pair_count(int from, int to) {
  return (from + to) % 3;
}

TEST_P(Collective, AlltoallvAndAlltoallw) {
  run_ranks(GetParam(), [](int rank, int size) {
    std::vector<int> sendcounts(size);
    std::vector<int> sdispls(size);
    std::vector<int> recvcounts(size);
    std::vector<int> rdispls(size);
    int sent = 0;
    int received = 0;
    for (int r = 0; r < size; ++r) {
      sendcounts[r] = pair_count(rank, r);
      sdispls[r] = sent;
      sent += sendcounts[r];
      recvcounts[r] = pair_count(r, rank);
    }
    // Blocks received in reverse rank order, to check that rdispls are followed.
    for (int r = size - 1; r >= 0; --r) {
      rdispls[r] = received;
      received += recvcounts[r];
    }
    std::vector<int> send(sent);
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < sendcounts[r]; ++i) send[sdispls[r] + i] = pair_value(rank, r, size, i);
    }
    std::vector<int> want(received);
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < recvcounts[r]; ++i) want[rdispls[r] + i] = pair_value(r, rank, size, i);
    }
    auto expected = [&](std::size_t i) { return want[i]; };

    std::vector<int> recv(received, -1);
    MPI_Alltoallv(send.data(), sendcounts.data(), sdispls.data(), MPI_INT, recv.data(),
                  recvcounts.data(), rdispls.data(), MPI_INT, MPI_COMM_WORLD);
    expect_elements(recv, expected, "Alltoallv");

    // In place, the receive layout is also the send layout (pair_count is symmetric): the block
    // for rank r holds what this rank sends r before the call.
    std::vector<int> inout(received, -1);
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < recvcounts[r]; ++i) inout[rdispls[r] + i] = pair_value(rank, r, size, i);
    }
    MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, inout.data(),
                  recvcounts.data(), rdispls.data(), MPI_INT, MPI_COMM_WORLD);
    expect_elements(inout, expected, "Alltoallv in place");

    // Alltoallw: byte displacements, and a different type per side: pairs of ints received as
    // MPI_2INT where the peer sent two MPI_INTs.
    std::vector<int> wsendcounts(size, 2);
    std::vector<int> wsdispls(size);
    std::vector<MPI_Datatype> wsendtypes(size, MPI_INT);
    std::vector<int> wrecvcounts(size, 1);
    std::vector<int> wrdispls(size);
    std::vector<MPI_Datatype> wrecvtypes(size, MPI_2INT);
    std::vector<int> wsend(2 * size);
    for (int r = 0; r < size; ++r) {
      wsdispls[r] = static_cast<int>(2 * r * sizeof(int));
      wrdispls[r] = static_cast<int>(2 * (size - 1 - r) * sizeof(int));
      wsend[2 * r] = pair_value(rank, r, size, 0);
      wsend[2 * r + 1] = pair_value(rank, r, size, 1);
    }
    std::vector<int> wrecv(2 * size, -1);
    MPI_Alltoallw(wsend.data(), wsendcounts.data(), wsdispls.data(), wsendtypes.data(),
                  wrecv.data(), wrecvcounts.data(), wrdispls.data(), wrecvtypes.data(),
                  MPI_COMM_WORLD);
    expect_elements(
        wrecv, [&](std::size_t i) { return pair_value(size - 1 - int(i / 2), rank, size, i % 2); },
        "Alltoallw");
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, Collective, ::testing::ValuesIn(kShapes), shape_name);

}  // namespace
}  // namespace weft::mpi::testing
