// A small Bcast, Reduce, Allgather or a Barrier between two members of one process goes through the
// communicator's pair ring (mpi/coll/pair_ring.h): the sending member (Bcast root, Reduce non-root)
// copies its payload into a slot and returns without waiting for the other. These tests hold the
// receiving member back until the sender has made more calls than the ring has slots, so that the
// sender must return early, reuse its buffer at once, and wait only for slots not yet consumed.
#include <atomic>
#include <cstring>

#include "collective_testing.h"
#include "ring_testing.h"
#include "weft/this_thread.h"

namespace weft::mpi::testing {
namespace {

class PairRing : public ::testing::TestWithParam<Shape> {};

TEST_P(PairRing, BcastRootRunsAhead) {
  weft::testing::Shared<std::atomic<int>> sent(0);
  run_ranks(GetParam(), [&](int rank, int) {
    const int root = 1;
    if (rank == root) {
      for (int k = 0; k < kAhead; ++k) {
        long long data = value(k);
        ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
        data = -1;  // reusable at return: the other member must still get value(k)
        // The first kSlots calls return before the other member reads anything.
        sent->store(k + 1, std::memory_order_release);
      }
      return;
    }
    // The root gets ahead as far as the ring lets it: its first kSlots calls return first.
    EXPECT_TRUE(wait_for(*sent, kSlots)) << "the Bcast root waited for the other member";
    for (int k = 0; k < kAhead; ++k) {
      long long data = -1;
      ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(data, value(k)) << "call " << k;
    }
  });
}

TEST_P(PairRing, ReduceSenderRunsAheadOfAnInPlaceRoot) {
  weft::testing::Shared<std::atomic<int>> sent(0);
  run_ranks(GetParam(), [&](int rank, int) {
    const int root = 0;
    if (rank != root) {
      for (int k = 0; k < kAhead; ++k) {
        long long mine[3] = {value(k), 2 * value(k), -value(k)};
        ASSERT_EQ(MPI_Reduce(mine, nullptr, 3, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD),
                  MPI_SUCCESS);
        std::memset(mine, 0, sizeof mine);
        sent->store(k + 1, std::memory_order_release);
      }
      return;
    }
    EXPECT_TRUE(wait_for(*sent, kSlots)) << "the Reduce non-root waited for the root";
    for (int k = 0; k < kAhead; ++k) {
      long long acc[3] = {k, k, k};
      ASSERT_EQ(MPI_Reduce(MPI_IN_PLACE, acc, 3, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD),
                MPI_SUCCESS);
      EXPECT_EQ(acc[0], k + value(k)) << "call " << k;
      EXPECT_EQ(acc[1], k + 2 * value(k)) << "call " << k;
      EXPECT_EQ(acc[2], k - value(k)) << "call " << k;
    }
  });
}

// A reader tells the writer how far it has read only every few slots, and before it waits: here
// the root of each Reduce has read one slot of the non-root's (call 8k) when the non-root, the
// reader of the seven Bcasts between, needs that slot again for the next Reduce; the root, at that
// Reduce, waits for the non-root's slot and must first tell it the slot is free.
TEST_P(PairRing, ReaderTellsItsCountBeforeWaiting) {
  run_ranks(GetParam(), [&](int rank, int) {
    const int root = 1;
    for (int round = 0; round < 4; ++round) {
      long long mine = rank + round;
      long long sum = -1;
      ASSERT_EQ(MPI_Reduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD),
                MPI_SUCCESS);
      if (rank == root) {
        EXPECT_EQ(sum, 1 + 2 * round) << "round " << round;
      }
      for (int k = 0; k < kSlots - 1; ++k) {
        long long data = rank == root ? value(k) : -1;
        ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
        EXPECT_EQ(data, value(k)) << "round " << round << ", call " << k;
      }
    }
  });
}

// a op b = 10 a + b: the result tells the order (12 for member 0's 1 and member 1's 2; 21 the
// other way round).
void ten_a_plus_b(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const long long*>(in);
  auto* b = static_cast<long long*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = 10 * a[i] + b[i];
}

// The ring's reduction applies the operation once, member 0's input to member 1's, whichever
// member reduces and whichever buffer is in place: a non-commutative operation gets rank order
// at either root, and both members of an Allreduce the same result.
TEST_P(PairRing, NonCommutativeReductionsFoldInRankOrder) {
  run_ranks(GetParam(), [&](int rank, int) {
    MPI_Op op = MPI_OP_NULL;
    ASSERT_EQ(MPI_Op_create(ten_a_plus_b, 0, &op), MPI_SUCCESS);
    const long long mine[2] = {rank + 1LL, 3 * (rank + 1LL)};  // {1, 3} and {2, 6}
    const long long expected[2] = {12, 36};
    for (int k = 0; k < 2 * kSlots; ++k) {
      const bool in_place = k % 2 == 1;
      const int root = (k / 2) % 2;
      long long out[2] = {mine[0], mine[1]};
      const void* send = rank == root && in_place ? MPI_IN_PLACE : mine;
      ASSERT_EQ(MPI_Reduce(send, out, 2, MPI_LONG_LONG, op, root, MPI_COMM_WORLD), MPI_SUCCESS);
      if (rank == root) {
        EXPECT_EQ(out[0], expected[0]) << "Reduce at root " << root << ", in place " << in_place;
        EXPECT_EQ(out[1], expected[1]) << "Reduce at root " << root << ", in place " << in_place;
      }
      long long all[2] = {mine[0], mine[1]};
      ASSERT_EQ(
          MPI_Allreduce(in_place ? MPI_IN_PLACE : mine, all, 2, MPI_LONG_LONG, op, MPI_COMM_WORLD),
          MPI_SUCCESS);
      EXPECT_EQ(all[0], expected[0]) << "Allreduce, in place " << in_place << ", rank " << rank;
      EXPECT_EQ(all[1], expected[1]) << "Allreduce, in place " << in_place << ", rank " << rank;
    }
    MPI_Op_free(&op);
  });
}

// Calls of the ring, of the meetings and nonblocking ones interleaved: their numbers stay in step.
TEST_P(PairRing, MixedWithMeetingsAndNonblockingCalls) {
  run_ranks(GetParam(), [&](int rank, int) {
    for (int k = 0; k < 50; ++k) {
      long long data = rank == 0 ? value(k) : -1;
      ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(data, value(k));
      MPI_Request request = MPI_REQUEST_NULL;
      long long sum = -1;
      const long long one = rank + k;
      ASSERT_EQ(MPI_Iallreduce(&one, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &request),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      EXPECT_EQ(sum, 2 * k + 1);
      long long large[64] = {};  // 512 B: above the ring's payload, so a meeting
      large[63] = rank;
      long long out[64] = {};
      ASSERT_EQ(MPI_Allreduce(large, out, 64, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(out[63], 1);
      ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD),
                MPI_SUCCESS);
      EXPECT_EQ(sum, 2 * k + 1);
    }
  });
}

// A small Allgather of two members meets through the ring too (one exchange of slots): the
// members' send layouts may differ (a strided vector against contiguous elements), one may pass
// MPI_IN_PLACE, an Allgatherv's blocks may differ in size, and every value of every call must land
// in the right block.
TEST_P(PairRing, AllgatherOfDifferentLayoutsAndInPlace) {
  run_ranks(GetParam(), [&](int rank, int) {
    MPI_Datatype strided = MPI_DATATYPE_NULL;  // 2 elements, every other one
    ASSERT_EQ(MPI_Type_vector(2, 1, 2, MPI_LONG_LONG, &strided), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_commit(&strided), MPI_SUCCESS);
    for (int k = 0; k < 30; ++k) {
      long long out[4] = {-1, -1, -1, -1};
      if (rank == 0) {
        const long long spread[3] = {value(k), -7, value(k) + 1};
        ASSERT_EQ(MPI_Allgather(spread, 1, strided, out, 2, MPI_LONG_LONG, MPI_COMM_WORLD),
                  MPI_SUCCESS);
      } else if (k % 2 == 0) {
        out[2] = 2 * value(k);
        out[3] = 2 * value(k) + 1;
        ASSERT_EQ(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, 2, MPI_LONG_LONG,
                                MPI_COMM_WORLD),
                  MPI_SUCCESS);
      } else {
        const long long mine[2] = {2 * value(k), 2 * value(k) + 1};
        ASSERT_EQ(MPI_Allgather(mine, 2, MPI_LONG_LONG, out, 2, MPI_LONG_LONG, MPI_COMM_WORLD),
                  MPI_SUCCESS);
      }
      EXPECT_EQ(out[0], value(k)) << "call " << k;
      EXPECT_EQ(out[1], value(k) + 1) << "call " << k;
      EXPECT_EQ(out[2], 2 * value(k)) << "call " << k;
      EXPECT_EQ(out[3], 2 * value(k) + 1) << "call " << k;
      // Blocks of 1 and 3 elements, the second one first in the buffer.
      const int counts[2] = {1, 3};
      const int displs[2] = {3, 0};
      long long v[4] = {-1, -1, -1, -1};
      const long long send[3] = {value(k) + rank, value(k) + 10, value(k) + 20};
      ASSERT_EQ(MPI_Allgatherv(send, counts[rank], MPI_LONG_LONG, v, counts, displs, MPI_LONG_LONG,
                               MPI_COMM_WORLD),
                MPI_SUCCESS);
      EXPECT_EQ(v[3], value(k)) << "call " << k;
      EXPECT_EQ(v[0], value(k) + 1) << "call " << k;
      EXPECT_EQ(v[1], value(k) + 10) << "call " << k;
      EXPECT_EQ(v[2], value(k) + 20) << "call " << k;
    }
    MPI_Type_free(&strided);
  });
}

// A member that sends more than the receive blocks hold: the other member's call reports it as a
// truncation, as the meeting's path does, and the job goes on.
TEST_P(PairRing, AllgatherLargerSendIsATruncation) {
  run_ranks(GetParam(), [&](int rank, int) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const long long mine[2] = {value(rank), value(rank) + 1};
    long long out[2] = {-1, -1};
    const int rc = MPI_Allgather(mine, rank == 0 ? 2 : 1, MPI_LONG_LONG, out, 1, MPI_LONG_LONG,
                                 MPI_COMM_WORLD);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    if (rank == 1) {
      EXPECT_EQ(error_class, MPI_ERR_TRUNCATE);
    } else {
      EXPECT_EQ(out[1], value(1));
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  });
}

// A contiguous datatype whose data starts past its lower bound's zero (one long long at byte 8 of
// each element, the elements back to back): the ring copies it as one run from buffer + 8.
MPI_Datatype offset_long_long() {
  const int length = 1;
  const MPI_Aint displacement = 8;
  const MPI_Datatype type = MPI_LONG_LONG;
  MPI_Datatype offset = MPI_DATATYPE_NULL;
  EXPECT_EQ(MPI_Type_create_struct(1, &length, &displacement, &type, &offset), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_commit(&offset), MPI_SUCCESS);
  return offset;
}

// The ring's copies take a contiguous buffer as one memcpy and any other through the datatype
// engine: a Bcast from root 1 of a contiguous type whose data starts at byte 8 of the buffer, and
// of a strided vector, lands every element where the type puts it and nothing elsewhere; a
// receive type that holds less than the root sent gets the first elements and MPI_ERR_TRUNCATE.
TEST_P(PairRing, BcastCopiesByTheDatatypesLayout) {
  run_ranks(GetParam(), [&](int rank, int) {
    const int root = 1;
    MPI_Datatype offset = offset_long_long();
    MPI_Datatype strided = MPI_DATATYPE_NULL;  // 3 elements, every other one
    ASSERT_EQ(MPI_Type_vector(3, 1, 2, MPI_LONG_LONG, &strided), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_commit(&strided), MPI_SUCCESS);
    for (int k = 0; k < 12; ++k) {
      long long shifted[4] = {-1, -1, -1, -1};
      if (rank == root) {
        for (int i = 1; i < 4; ++i) shifted[i] = value(k) + i;
      }
      ASSERT_EQ(MPI_Bcast(shifted, 3, offset, root, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(shifted[0], -1) << "call " << k << ", rank " << rank;
      for (int i = 1; i < 4; ++i) EXPECT_EQ(shifted[i], value(k) + i) << "call " << k;

      long long spread[5] = {-1, -1, -1, -1, -1};
      if (rank == root) {
        for (int i = 0; i < 5; i += 2) spread[i] = value(k) + i;
      }
      ASSERT_EQ(MPI_Bcast(spread, 1, strided, root, MPI_COMM_WORLD), MPI_SUCCESS);
      for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(spread[i], i % 2 == 0 ? value(k) + i : -1) << "call " << k << ", element " << i;
      }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long long data[3] = {value(1), value(2), value(3)};
    if (rank != root) data[0] = data[1] = data[2] = -1;
    const int rc = MPI_Bcast(data, rank == root ? 3 : 2, MPI_LONG_LONG, root, MPI_COMM_WORLD);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    EXPECT_EQ(error_class, rank == root ? MPI_SUCCESS : MPI_ERR_TRUNCATE);
    EXPECT_EQ(data[0], value(1));
    EXPECT_EQ(data[1], value(2));
    EXPECT_EQ(data[2], rank == root ? value(3) : -1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&strided);
    MPI_Type_free(&offset);
  });
}

// The same for an Allgather: send and receive blocks of the offset type, in place or not (each
// member's own block is copied from its slot), land from byte 8 of each block on.
TEST_P(PairRing, AllgatherCopiesByTheDatatypesLayout) {
  run_ranks(GetParam(), [&](int rank, int) {
    MPI_Datatype offset = offset_long_long();
    for (int k = 0; k < 12; ++k) {
      // Two elements per member: bytes 8 to 24 of the send buffer, 8 to 40 of the receive one.
      long long out[5] = {-1, -1, -1, -1, -1};
      const long long mine[3] = {-1, value(k) + 10 * rank, value(k) + 10 * rank + 1};
      if (k % 3 == 2) {
        out[1 + 2 * rank] = mine[1];
        out[2 + 2 * rank] = mine[2];
        ASSERT_EQ(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, 2, offset, MPI_COMM_WORLD),
                  MPI_SUCCESS);
      } else {
        ASSERT_EQ(MPI_Allgather(mine, 2, offset, out, 2, offset, MPI_COMM_WORLD), MPI_SUCCESS);
      }
      EXPECT_EQ(out[0], -1) << "call " << k << ", rank " << rank;
      for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(out[1 + 2 * r], value(k) + 10 * r) << "call " << k << ", rank " << rank;
        EXPECT_EQ(out[2 + 2 * r], value(k) + 10 * r + 1) << "call " << k << ", rank " << rank;
      }
    }
    MPI_Type_free(&offset);
  });
}

// A Barrier of two members meets through the ring too: neither returns before the other has
// arrived (what each wrote before its call is seen by the other after it), between calls of the
// ring of other kinds that reuse the same slots.
TEST_P(PairRing, BarrierWaitsForTheOtherBetweenOtherCalls) {
  weft::testing::Shared<std::atomic<int>> written(-1);
  run_ranks(GetParam(), [&](int rank, int) {
    for (int k = 0; k < 40; ++k) {
      if (rank == k % 2) {
        // The writer comes late: the other member reaches the Barrier first.
        for (int i = 0; i < 50; ++i) weft::this_thread::yield();
        written->store(k, std::memory_order_relaxed);
      }
      ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(written->load(std::memory_order_relaxed), k) << "call " << k << ", rank " << rank;
      long long data = rank == 0 ? value(k) : -1;
      ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(data, value(k));
      ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, PairRing, ::testing::Values(Shape{2, 1}, Shape{2, 2}), shape_name);

}  // namespace
}  // namespace weft::mpi::testing
