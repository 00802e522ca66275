// MPI_Igather, MPI_Iscatter, MPI_Iallgather and MPI_Ialltoall (and their v and w forms) between
// two members of one process go through the communicator's PairNbc (mpi/coll/pair_nbc.h), as the
// Ibcast, Ireduce and Iallreduce of pair_nbc_test.cpp do: the member that comes second moves
// every block, and a first member that only sends (an Igather non-root, the Iscatter root) copies
// its block and completes at its call. These tests order the two members' calls with
// point-to-point messages, so that each member comes first in turn.
#include <string>
#include <vector>

#include "collective_testing.h"

namespace weft::mpi::testing {
namespace {

class PairNbcBlocks : public ::testing::TestWithParam<Shape> {};

// What member s sends member d, element k.
int datum(int s, int d, int k) {
  return 1000 * s + 100 * d + k + 1;
}

// Two ints, a one-int gap, extent three ints: a receive type whose gaps must keep their value.
MPI_Datatype make_strided() {
  MPI_Datatype vector = MPI_DATATYPE_NULL;
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vector);
  MPI_Type_create_resized(vector, 0, 3 * sizeof(int), &strided);
  MPI_Type_commit(&strided);
  MPI_Type_free(&vector);
  return strided;
}

// Expects `buffer` (six ints, two strided blocks) to hold block b's pair {want(b, 0), want(b, 1)}
// at 3b and 3b + 2, its gap (3b + 1) untouched (-1). A block b with want(b, 0) < 0 is not checked.
template <class Want>
void expect_strided(const int* buffer, Want&& want, const std::string& what) {
  for (int b = 0; b < 2; ++b) {
    if (want(b, 0) < 0) continue;
    EXPECT_EQ(buffer[3 * b], want(b, 0)) << what << ", block " << b;
    EXPECT_EQ(buffer[3 * b + 1], -1) << what << ", gap of block " << b;
    EXPECT_EQ(buffer[3 * b + 2], want(b, 1)) << what << ", block " << b;
  }
}

// An Igather non-root and the Iscatter root are done when their call returns, before the other
// member has called, as are an Ibcast root and an Ireduce non-root of 1 KiB: their buffers are
// reusable, MPI_Test says so at once, MPI_Request_free accepts the request, and the Iscatter root
// has its own block.
TEST_P(PairNbcBlocks, SendersCompleteAtTheirCall) {
  run_ranks(GetParam(), [](int rank, int) {
    constexpr int kKiB = 1024;
    int gather_send[2] = {datum(rank, 1, 0), datum(rank, 1, 1)};
    int gathered[4] = {-1, -1, -1, -1};
    int scatter_send[4] = {datum(0, 0, 0), datum(0, 0, 1), datum(0, 1, 0), datum(0, 1, 1)};
    int scattered[2] = {-1, -1};
    std::vector<char> bcast(kKiB, rank == 0 ? 'b' : '-');
    std::vector<double> input(kKiB / sizeof(double), 1.0 + rank);
    std::vector<double> sum(input.size(), -1.0);
    MPI_Request requests[4];
    if (rank == 0) {
      MPI_Igather(gather_send, 2, MPI_INT, nullptr, 0, MPI_INT, 1, MPI_COMM_WORLD, &requests[0]);
      int flag = 0;
      MPI_Test(&requests[0], &flag, MPI_STATUS_IGNORE);
      EXPECT_EQ(flag, 1) << "the Igather non-root waited for the root";
      gather_send[0] = gather_send[1] = -2;
      MPI_Iscatter(scatter_send, 2, MPI_INT, scattered, 2, MPI_INT, 0, MPI_COMM_WORLD,
                   &requests[1]);
      MPI_Test(&requests[1], &flag, MPI_STATUS_IGNORE);
      EXPECT_EQ(flag, 1) << "the Iscatter root waited for the other member";
      EXPECT_EQ(scattered[0], datum(0, 0, 0));
      EXPECT_EQ(scattered[1], datum(0, 0, 1));
      for (int& v : scatter_send) v = -2;
      MPI_Ibcast(bcast.data(), kKiB, MPI_CHAR, 0, MPI_COMM_WORLD, &requests[2]);
      EXPECT_EQ(MPI_Request_free(&requests[2]), MPI_SUCCESS) << "the 1 KiB Ibcast root waits";
      bcast.assign(kKiB, '-');
      MPI_Ireduce(input.data(), nullptr, static_cast<int>(input.size()), MPI_DOUBLE, MPI_SUM, 1,
                  MPI_COMM_WORLD, &requests[3]);
      MPI_Test(&requests[3], &flag, MPI_STATUS_IGNORE);
      EXPECT_EQ(flag, 1) << "the 1 KiB Ireduce non-root waited for the root";
      input.assign(input.size(), -2.0);
      go(1, 1);
      return;
    }
    wait_go(0, 1);
    MPI_Igather(gather_send, 2, MPI_INT, gathered, 2, MPI_INT, 1, MPI_COMM_WORLD, &requests[0]);
    MPI_Iscatter(nullptr, 0, MPI_INT, scattered, 2, MPI_INT, 0, MPI_COMM_WORLD, &requests[1]);
    MPI_Ibcast(bcast.data(), kKiB, MPI_CHAR, 0, MPI_COMM_WORLD, &requests[2]);
    MPI_Ireduce(input.data(), sum.data(), static_cast<int>(input.size()), MPI_DOUBLE, MPI_SUM, 1,
                MPI_COMM_WORLD, &requests[3]);
    ASSERT_EQ(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    const int want[4] = {datum(0, 1, 0), datum(0, 1, 1), datum(1, 1, 0), datum(1, 1, 1)};
    for (int k = 0; k < 4; ++k) EXPECT_EQ(gathered[k], want[k]) << k;
    EXPECT_EQ(scattered[0], datum(0, 1, 0));
    EXPECT_EQ(scattered[1], datum(0, 1, 1));
    EXPECT_EQ(bcast, std::vector<char>(kKiB, 'b'));
    EXPECT_EQ(sum, std::vector<double>(input.size(), 3.0));
  });
}

// A member that comes first and receives is completed by the other member's call: MPI_Test says
// no until then, yes after, with the data; its requests cannot be freed or cancelled meanwhile.
TEST_P(PairNbcBlocks, ReceiversPolledWithTestCompleteWhenTheOtherMemberCalls) {
  run_ranks(GetParam(), [](int rank, int) {
    weft::testing::errors_return();
    int one[2] = {datum(rank, 0, 0), datum(rank, 1, 0)};
    int gathered[2] = {-1, -1};
    int scatter_send[2] = {datum(1, 0, 0), datum(1, 1, 0)};
    int scattered = -1;
    int all[2] = {-1, -1};
    int exchanged[2] = {-1, -1};
    MPI_Request requests[4];
    auto issue = [&] {
      MPI_Igather(&one[0], 1, MPI_INT, gathered, 1, MPI_INT, 0, MPI_COMM_WORLD, &requests[0]);
      MPI_Iscatter(scatter_send, 1, MPI_INT, &scattered, 1, MPI_INT, 1, MPI_COMM_WORLD,
                   &requests[1]);
      MPI_Iallgather(&one[0], 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &requests[2]);
      MPI_Ialltoall(one, 1, MPI_INT, exchanged, 1, MPI_INT, MPI_COMM_WORLD, &requests[3]);
    };
    if (rank == 0) {
      issue();
      for (int i = 0; i < 100; ++i) {
        int flag = 1;
        MPI_Testall(4, requests, &flag, MPI_STATUSES_IGNORE);
        EXPECT_EQ(flag, 0) << "complete before the other member called";
      }
      EXPECT_EQ(MPI_Request_free(&requests[0]), MPI_ERR_REQUEST);
      EXPECT_EQ(MPI_Cancel(&requests[1]), MPI_ERR_REQUEST);
      go(1, 2);
      int flag = 0;
      while (flag == 0) MPI_Testall(4, requests, &flag, MPI_STATUSES_IGNORE);
      EXPECT_EQ(gathered[0], datum(0, 0, 0));
      EXPECT_EQ(gathered[1], datum(1, 0, 0));
    } else {
      wait_go(0, 2);
      issue();
      EXPECT_EQ(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    }
    EXPECT_EQ(scattered, datum(1, rank, 0));
    EXPECT_EQ(all[0], datum(0, 0, 0));
    EXPECT_EQ(all[1], datum(1, 0, 0));
    EXPECT_EQ(exchanged[0], datum(0, rank, 0));
    EXPECT_EQ(exchanged[1], datum(1, rank, 0));
  });
}

// Every kind and its v and w forms, each member first in turn, each root, with a strided receive
// (or Iscatter send) type and the v forms' blocks in reverse order: each block lands where its
// layout says, the gaps keep their value.
TEST_P(PairNbcBlocks, EveryFormInEitherOrderAndRootFollowsTheLayouts) {
  run_ranks(GetParam(), [](int rank, int) {
    const MPI_Datatype strided = make_strided();
    const int other = 1 - rank;
    const int ones[2] = {1, 1};
    const int reversed[2] = {1, 0};  // displacements in extents: member 0's block second
    const int twos[2] = {2, 2};
    const int reversed_ints[2] = {2, 0};       // in ints
    const int reversed_bytes[2] = {12, 0};     // in bytes, strided extents
    const int reversed_int_bytes[2] = {8, 0};  // in bytes, two ints
    const MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
    const MPI_Datatype strideds[2] = {strided, strided};
    for (int first = 0; first < 2; ++first) {
      for (int root = 0; root < 2; ++root) {
        const std::string what =
            "first " + std::to_string(first) + ", root " + std::to_string(root) + ", ";
        // What this member sends every member (and the root, scattering, in strided layout).
        const int mine[2] = {datum(rank, root, 0), datum(rank, root, 1)};
        int rows[4] = {datum(rank, 0, 0), datum(rank, 0, 1), datum(rank, 1, 0), datum(rank, 1, 1)};
        int reversed_rows[4] = {rows[2], rows[3], rows[0], rows[1]};
        int scatter_source[6] = {datum(root, 0, 0), -1, datum(root, 0, 1),
                                 datum(root, 1, 0), -1, datum(root, 1, 1)};
        int scatterv_source[6] = {scatter_source[3], -1, scatter_source[5],
                                  scatter_source[0], -1, scatter_source[2]};
        std::vector<std::vector<int>> out(9, std::vector<int>(6, -1));
        MPI_Request requests[9];
        if (rank != first) wait_go(first, 3);
        MPI_Igather(mine, 2, MPI_INT, out[0].data(), 1, strided, root, MPI_COMM_WORLD,
                    &requests[0]);
        MPI_Igatherv(mine, 2, MPI_INT, out[1].data(), ones, reversed, strided, root, MPI_COMM_WORLD,
                     &requests[1]);
        MPI_Iscatter(scatter_source, 1, strided, out[2].data(), 2, MPI_INT, root, MPI_COMM_WORLD,
                     &requests[2]);
        MPI_Iscatterv(scatterv_source, ones, reversed, strided, out[3].data(), 2, MPI_INT, root,
                      MPI_COMM_WORLD, &requests[3]);
        MPI_Iallgather(mine, 2, MPI_INT, out[4].data(), 1, strided, MPI_COMM_WORLD, &requests[4]);
        MPI_Iallgatherv(mine, 2, MPI_INT, out[5].data(), ones, reversed, strided, MPI_COMM_WORLD,
                        &requests[5]);
        MPI_Ialltoall(rows, 2, MPI_INT, out[6].data(), 1, strided, MPI_COMM_WORLD, &requests[6]);
        MPI_Ialltoallv(reversed_rows, twos, reversed_ints, MPI_INT, out[7].data(), ones, reversed,
                       strided, MPI_COMM_WORLD, &requests[7]);
        MPI_Ialltoallw(reversed_rows, twos, reversed_int_bytes, ints, out[8].data(), ones,
                       reversed_bytes, strideds, MPI_COMM_WORLD, &requests[8]);
        if (rank == first) go(other, 3);
        ASSERT_EQ(MPI_Waitall(9, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS) << what;
        // Block b of a reversed layout is member 1 - b's.
        auto gathered = [&](bool reverse) {
          return [&, reverse](int b, int k) {
            return rank == root ? datum(reverse ? 1 - b : b, root, k) : -1;
          };
        };
        expect_strided(out[0].data(), gathered(false), what + "Igather");
        expect_strided(out[1].data(), gathered(true), what + "Igatherv");
        if (rank != root) {
          for (int k = 0; k < 6; ++k) {
            EXPECT_EQ(out[0][static_cast<std::size_t>(k)], -1) << what << "Igather non-root";
          }
        }
        for (int v = 2; v < 4; ++v) {
          const std::string name = what + (v == 2 ? "Iscatter" : "Iscatterv");
          EXPECT_EQ(out[static_cast<std::size_t>(v)][0], datum(root, rank, 0)) << name;
          EXPECT_EQ(out[static_cast<std::size_t>(v)][1], datum(root, rank, 1)) << name;
          EXPECT_EQ(out[static_cast<std::size_t>(v)][2], -1) << name;
        }
        auto all = [&](bool reverse) {
          return [&, reverse](int b, int k) { return datum(reverse ? 1 - b : b, root, k); };
        };
        expect_strided(out[4].data(), all(false), what + "Iallgather");
        expect_strided(out[5].data(), all(true), what + "Iallgatherv");
        auto row = [&](bool reverse) {
          return [&, reverse](int b, int k) { return datum(reverse ? 1 - b : b, rank, k); };
        };
        expect_strided(out[6].data(), row(false), what + "Ialltoall");
        expect_strided(out[7].data(), row(true), what + "Ialltoallv");
        expect_strided(out[8].data(), row(true), what + "Ialltoallw");
      }
    }
    MPI_Datatype freed = strided;
    MPI_Type_free(&freed);
  });
}

// MPI_IN_PLACE at the Igather and Iscatter root (its own block stays where it is) and at both
// members of an Iallgather and an Ialltoall(v), whose blocks for each other cross: each member
// first in turn.
TEST_P(PairNbcBlocks, InPlaceInEitherOrder) {
  run_ranks(GetParam(), [](int rank, int) {
    const int counts[2] = {2, 2};
    const int reversed[2] = {2, 0};
    for (int first = 0; first < 2; ++first) {
      for (int root = 0; root < 2; ++root) {
        const std::string what =
            "first " + std::to_string(first) + ", root " + std::to_string(root) + ", ";
        const bool is_root = rank == root;
        int mine[2] = {datum(rank, 0, 0), datum(rank, 0, 1)};
        int gathered[4] = {-1, -1, -1, -1};
        if (is_root) {
          gathered[2 * rank] = mine[0];
          gathered[2 * rank + 1] = mine[1];
        }
        int scatter_source[4] = {datum(root, 0, 0), datum(root, 0, 1), datum(root, 1, 0),
                                 datum(root, 1, 1)};
        int scattered[2] = {-1, -1};
        int all[4] = {-1, -1, -1, -1};
        all[2 * rank] = mine[0];
        all[2 * rank + 1] = mine[1];
        int rows[4] = {datum(rank, 0, 0), datum(rank, 0, 1), datum(rank, 1, 0), datum(rank, 1, 1)};
        // Alltoallv's blocks reversed: the block for member d at 2 * (1 - d).
        int reversed_rows[4] = {rows[2], rows[3], rows[0], rows[1]};
        MPI_Request requests[5];
        if (rank != first) wait_go(first, 4);
        MPI_Igather(is_root ? MPI_IN_PLACE : mine, 2, MPI_INT, is_root ? gathered : nullptr, 2,
                    MPI_INT, root, MPI_COMM_WORLD, &requests[0]);
        MPI_Iscatter(is_root ? scatter_source : nullptr, 2, MPI_INT,
                     is_root ? MPI_IN_PLACE : scattered, 2, MPI_INT, root, MPI_COMM_WORLD,
                     &requests[1]);
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 2, MPI_INT, MPI_COMM_WORLD,
                       &requests[2]);
        MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rows, 2, MPI_INT, MPI_COMM_WORLD,
                      &requests[3]);
        MPI_Ialltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, reversed_rows, counts,
                       reversed, MPI_INT, MPI_COMM_WORLD, &requests[4]);
        if (rank == first) go(1 - first, 4);
        ASSERT_EQ(MPI_Waitall(5, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS) << what;
        for (int r = 0; r < 2; ++r) {
          for (int k = 0; k < 2; ++k) {
            if (is_root) {
              EXPECT_EQ(gathered[2 * r + k], datum(r, 0, k)) << what << "Igather";
              EXPECT_EQ(scatter_source[2 * r + k], datum(root, r, k)) << what << "Iscatter root";
            }
            EXPECT_EQ(all[2 * r + k], datum(r, 0, k)) << what << "Iallgather";
            EXPECT_EQ(rows[2 * r + k], datum(r, rank, k)) << what << "Ialltoall";
            EXPECT_EQ(reversed_rows[2 * (1 - r) + k], datum(r, rank, k)) << what << "Ialltoallv";
          }
        }
        if (!is_root) {
          EXPECT_EQ(scattered[0], datum(root, rank, 0)) << what << "Iscatter";
          EXPECT_EQ(scattered[1], datum(root, rank, 1)) << what << "Iscatter";
        }
      }
    }
  });
}

// A block larger than where it goes: the member that receives it fails its wait with
// MPI_ERR_TRUNCATE (the Igather root, an Iscatter reader, an Iallgather or Ialltoall member), as
// the instances and the blocking calls report it; the sender succeeds. Each member first in turn.
TEST_P(PairNbcBlocks, ABlockTooLargeFailsItsReceiver) {
  run_ranks(GetParam(), [](int rank, int) {
    weft::testing::errors_return();
    for (int first = 0; first < 2; ++first) {
      // Member 1 sends three ints where member 0 receives two.
      const int sent = rank == 1 ? 3 : 2;
      int send[6] = {1, 2, 3, 4, 5, 6};
      int receive[6] = {-1, -1, -1, -1, -1, -1};
      MPI_Request requests[4];
      if (rank != first) wait_go(first, 5);
      MPI_Igather(send, sent, MPI_INT, receive, 2, MPI_INT, 0, MPI_COMM_WORLD, &requests[0]);
      // The root (1) sends three ints to each; member 0 receives two, itself three.
      MPI_Iscatter(send, 3, MPI_INT, receive, sent, MPI_INT, 1, MPI_COMM_WORLD, &requests[1]);
      MPI_Iallgather(send, sent, MPI_INT, receive, sent, MPI_INT, MPI_COMM_WORLD, &requests[2]);
      MPI_Ialltoall(send, sent, MPI_INT, receive, sent, MPI_INT, MPI_COMM_WORLD, &requests[3]);
      if (rank == first) go(1 - first, 5);
      const int want = rank == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
      const char* names[4] = {"Igather", "Iscatter", "Iallgather", "Ialltoall"};
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(MPI_Wait(&requests[i], MPI_STATUS_IGNORE), want)
            << names[i] << ", first " << first;
      }
    }
  });
}

// The new kinds between the existing ones, instances' calls (Iallgathers of 8 KiB a member),
// blocking calls of meetings and of the pair ring, member 0 ahead up to its first blocking call;
// completed in reverse order. Each call's result is its own: calls match in issue order whatever
// path each takes.
TEST_P(PairNbcBlocks, InterleavedWithOtherCollectivesMatchInIssueOrder) {
  run_ranks(GetParam(), [](int rank, int) {
    constexpr int kCalls = 140;
    constexpr int kLarge = 2048;  // ints: past the queue's block
    struct Call {
      std::vector<int> in;
      std::vector<int> out;
      MPI_Request request = MPI_REQUEST_NULL;
    };
    std::vector<Call> calls(kCalls);
    auto issue = [&](int i) {
      Call& c = calls[static_cast<std::size_t>(i)];
      const int root = (i / 7) % 2;
      const int n = i % 3 == 0 ? 256 : 1;  // a 1 KiB block every third call
      c.in.assign(2 * static_cast<std::size_t>(n), 0);
      for (std::size_t k = 0; k < c.in.size(); ++k) c.in[k] = i * 10 + rank + static_cast<int>(k);
      c.out.assign(2 * static_cast<std::size_t>(n), -1);
      switch (i % 7) {
        case 0:
          MPI_Igather(c.in.data(), n, MPI_INT, c.out.data(), n, MPI_INT, root, MPI_COMM_WORLD,
                      &c.request);
          break;
        case 1:
          MPI_Iscatter(c.in.data(), n, MPI_INT, c.out.data(), n, MPI_INT, root, MPI_COMM_WORLD,
                       &c.request);
          break;
        case 2:
          MPI_Iallgather(c.in.data(), n, MPI_INT, c.out.data(), n, MPI_INT, MPI_COMM_WORLD,
                         &c.request);
          break;
        case 3:
          MPI_Ialltoall(c.in.data(), n, MPI_INT, c.out.data(), n, MPI_INT, MPI_COMM_WORLD,
                        &c.request);
          break;
        case 4:
          c.in.assign(kLarge, i * 10 + rank);
          c.out.assign(2 * kLarge, -1);
          MPI_Iallgather(c.in.data(), kLarge, MPI_INT, c.out.data(), kLarge, MPI_INT,
                         MPI_COMM_WORLD, &c.request);
          break;
        case 5:
          MPI_Ibcast(c.in.data(), n, MPI_INT, root, MPI_COMM_WORLD, &c.request);
          break;
        default:
          MPI_Gather(c.in.data(), n, MPI_INT, c.out.data(), n, MPI_INT, root, MPI_COMM_WORLD);
          MPI_Allreduce(MPI_IN_PLACE, c.in.data(), 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
          break;
      }
    };
    // Member 0 alone first, up to its first blocking call (which waits for member 1).
    issue_member0_first(rank, 6, kCalls, 6, issue);
    for (int i = kCalls - 1; i >= 0; --i) {
      Call& c = calls[static_cast<std::size_t>(i)];
      ASSERT_EQ(MPI_Wait(&c.request, MPI_STATUS_IGNORE), MPI_SUCCESS) << "call " << i;
      const int root = (i / 7) % 2;
      const int n = static_cast<int>(c.in.size()) / 2;
      // Element k of member s's send buffer.
      auto in = [i](int s, int k) { return i * 10 + s + k; };
      const std::string what = "call " + std::to_string(i);
      switch (i % 7) {
        case 0:
        case 6:
          if (rank == root) {
            for (int s = 0; s < 2; ++s) {
              for (int k = 0; k < n; ++k) {
                ASSERT_EQ(c.out[static_cast<std::size_t>(s * n + k)], in(s, k)) << what;
              }
            }
          }
          break;
        case 1:
          for (int k = 0; k < n; ++k) {
            ASSERT_EQ(c.out[static_cast<std::size_t>(k)], in(root, rank * n + k)) << what;
          }
          break;
        case 2:
          for (int s = 0; s < 2; ++s) {
            for (int k = 0; k < n; ++k) {
              ASSERT_EQ(c.out[static_cast<std::size_t>(s * n + k)], in(s, k)) << what;
            }
          }
          break;
        case 3:
          for (int s = 0; s < 2; ++s) {
            for (int k = 0; k < n; ++k) {
              ASSERT_EQ(c.out[static_cast<std::size_t>(s * n + k)], in(s, rank * n + k)) << what;
            }
          }
          break;
        case 4:
          EXPECT_EQ(c.out[0], i * 10) << what;
          EXPECT_EQ(c.out[2 * kLarge - 1], i * 10 + 1) << what;
          break;
        case 5:
          for (int k = 0; k < n; ++k) {
            ASSERT_EQ(c.in[static_cast<std::size_t>(k)], in(root, k)) << what;
          }
          break;
        default:
          break;
      }
    }
  });
}

// More Iscatter and Igather calls of 1 KiB ahead than the member keeps eager copies of: the queue
// grows with the copies in it, and the later calls keep the caller's buffer until the other
// member comes.
TEST_P(PairNbcBlocks, ASenderFarAheadKeepsItsLaterBuffers) {
  run_ranks(GetParam(), [](int rank, int) {
    constexpr int kCalls = 150;
    constexpr int kInts = 256;
    std::vector<std::vector<int>> buffers(kCalls);
    std::vector<MPI_Request> requests(kCalls, MPI_REQUEST_NULL);
    auto issue = [&](int i) {
      std::vector<int>& buffer = buffers[static_cast<std::size_t>(i)];
      MPI_Request* request = &requests[static_cast<std::size_t>(i)];
      if (i % 2 == 0) {
        // Member 0 scatters: member 1's block is the second half.
        buffer.assign(2 * kInts, rank == 0 ? i : -1);
        MPI_Iscatter(buffer.data(), kInts, MPI_INT, rank == 0 ? MPI_IN_PLACE : buffer.data(), kInts,
                     MPI_INT, 0, MPI_COMM_WORLD, request);
      } else {
        // Member 0 gathers to member 1, whose receive buffer is the last two thirds.
        buffer.assign(3 * kInts, rank == 0 ? i : -1);
        MPI_Igather(buffer.data(), kInts, MPI_INT, rank == 1 ? buffer.data() + kInts : nullptr,
                    kInts, MPI_INT, 1, MPI_COMM_WORLD, request);
      }
    };
    if (rank == 0) {
      for (int i = 0; i < kCalls; ++i) issue(i);
      go(1, 7);
    } else {
      wait_go(0, 7);
      for (int i = 0; i < kCalls; ++i) issue(i);
    }
    ASSERT_EQ(MPI_Waitall(kCalls, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    if (rank == 1) {
      for (int i = 0; i < kCalls; ++i) {
        // Scatter: the block at the start; gather: member 0's at the receive buffer's start.
        const std::vector<int>& buffer = buffers[static_cast<std::size_t>(i)];
        const std::size_t at = i % 2 == 0 ? 0 : kInts;
        EXPECT_EQ(buffer[at], i) << i;
        EXPECT_EQ(buffer[at + kInts - 1], i) << i;
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, PairNbcBlocks, ::testing::Values(Shape{2, 1}, Shape{2, 2}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return std::to_string(info.param.vps) + "vps";
                         });

class PairNbcBlocksDeath : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// Two nonblocking calls of one number and different kinds.
TEST_F(PairNbcBlocksDeath, CallsOfDifferentKindsEndTheJob) {
  EXPECT_EXIT(weft::testing::exit_with(weft::testing::run_ranks(
                  2, 1,
                  [](int rank) {
                    int v[2] = {1, 2};
                    int out[2] = {0, 0};
                    MPI_Request request = MPI_REQUEST_NULL;
                    if (rank == 0) {
                      MPI_Igather(v, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
                    } else {
                      MPI_Ialltoall(v, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD, &request);
                    }
                    MPI_Wait(&request, MPI_STATUS_IGNORE);
                  })),
              ::testing::ExitedWithCode(1),
              "collective calls out of order: rank [01]'s collective call #0 on a communicator is "
              "MPI_I(gather|alltoall) where another member's is MPI_I(gather|alltoall)");
}

// The Igather root's wait names the call, the sender and both sizes, as the instance's does.
TEST_F(PairNbcBlocksDeath, ATruncatedGatherNamesTheSender) {
  EXPECT_EXIT(
      weft::testing::exit_with(weft::testing::run_ranks(2, 1,
                                                        [](int rank) {
                                                          int v[3] = {1, 2, 3};
                                                          int out[4] = {0, 0, 0, 0};
                                                          MPI_Request request = MPI_REQUEST_NULL;
                                                          MPI_Igather(v, rank == 1 ? 3 : 2, MPI_INT,
                                                                      out, 2, MPI_INT, 0,
                                                                      MPI_COMM_WORLD, &request);
                                                          MPI_Wait(&request, MPI_STATUS_IGNORE);
                                                        })),
      ::testing::ExitedWithCode(1),
      "MPI_Wait \\(rank 0\\): MPI_ERR_TRUNCATE: MPI_Igather: rank 1 sent 12 bytes where the "
      "receive count and type hold 8 bytes");
}

}  // namespace
}  // namespace weft::mpi::testing
