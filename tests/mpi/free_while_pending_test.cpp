// Freeing a datatype or a user operation while a nonblocking or persistent operation still uses
// it (MPI-4.1 5.1.9, 6.9.5): the free succeeds at once and the operation completes with the
// object as it was. Each test makes a new object right after the free, so that a freed one whose
// memory or handle were reused would show in the data.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::run_ranks;

// Every send waits for its receive (rendezvous): the receiver copies through the sender's type.
const std::vector<std::pair<std::string, std::string>> kNoEager = {{"mpi.eager_limit", "0"},
                                                                   {"mpi.remote_eager_limit", "0"}};

// Every third int of 8, as an indexed-block type: ints 0, 3, 6, 9, 12, 15, 18, 21.
MPI_Datatype every_third() {
  const int displacements[] = {0, 3, 6, 9, 12, 15, 18, 21};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  EXPECT_EQ(MPI_Type_create_indexed_block(8, 1, displacements, MPI_INT, &type), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_commit(&type), MPI_SUCCESS);
  return type;
}

// A type of another shape, made after a free to take the freed type's place.
MPI_Datatype decoy() {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  EXPECT_EQ(MPI_Type_contiguous(3, MPI_SHORT, &type), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_commit(&type), MPI_SUCCESS);
  return type;
}

std::vector<int> sent_ints() {
  std::vector<int> data(24);
  std::iota(data.begin(), data.end(), 100);
  return data;
}

void expect_every_third(const std::vector<int>& received) {
  for (int i = 0; i < 8; ++i) EXPECT_EQ(received[static_cast<std::size_t>(i)], 100 + 3 * i) << i;
}

// The reproducer: Isend with an indexed-block type, free it, then wait; the receive is
// posted only after the free.
TEST(FreeWhilePending, IsendType) {
  ASSERT_EQ(run_ranks(
                2, 2,
                [](int rank) {
                  if (rank == 0) {
                    const std::vector<int> data = sent_ints();
                    MPI_Datatype type = every_third();
                    MPI_Request request = MPI_REQUEST_NULL;
                    ASSERT_EQ(MPI_Isend(data.data(), 1, type, 1, 0, MPI_COMM_WORLD, &request),
                              MPI_SUCCESS);
                    ASSERT_EQ(MPI_Type_free(&type), MPI_SUCCESS);
                    MPI_Datatype other = decoy();
                    MPI_Barrier(MPI_COMM_WORLD);
                    ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
                    MPI_Type_free(&other);
                  } else {
                    MPI_Barrier(MPI_COMM_WORLD);
                    std::vector<int> received(8, -1);
                    MPI_Recv(received.data(), 8, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    expect_every_third(received);
                  }
                },
                kNoEager),
            0);
}

// A receive posted with a type freed before the message arrives.
TEST(FreeWhilePending, IrecvType) {
  ASSERT_EQ(run_ranks(
                2, 2,
                [](int rank) {
                  if (rank == 1) {
                    std::vector<int> received(24, -1);
                    MPI_Datatype type = every_third();
                    MPI_Request request = MPI_REQUEST_NULL;
                    ASSERT_EQ(MPI_Irecv(received.data(), 1, type, 0, 0, MPI_COMM_WORLD, &request),
                              MPI_SUCCESS);
                    ASSERT_EQ(MPI_Type_free(&type), MPI_SUCCESS);
                    MPI_Datatype other = decoy();
                    MPI_Barrier(MPI_COMM_WORLD);
                    ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
                    for (int i = 0; i < 24; ++i) {
                      EXPECT_EQ(received[static_cast<std::size_t>(i)], i % 3 == 0 ? i : -1);
                    }
                    MPI_Type_free(&other);
                  } else {
                    MPI_Barrier(MPI_COMM_WORLD);
                    std::vector<int> data(8);
                    for (int i = 0; i < 8; ++i) data[static_cast<std::size_t>(i)] = 3 * i;
                    MPI_Send(data.data(), 8, MPI_INT, 1, 0, MPI_COMM_WORLD);
                  }
                },
                kNoEager),
            0);
}

// A persistent send started several times after its type was freed.
TEST(FreeWhilePending, PersistentSendType) {
  ASSERT_EQ(run_ranks(
                2, 2,
                [](int rank) {
                  constexpr int kRounds = 3;
                  if (rank == 0) {
                    const std::vector<int> data = sent_ints();
                    MPI_Datatype type = every_third();
                    MPI_Request request = MPI_REQUEST_NULL;
                    ASSERT_EQ(MPI_Send_init(data.data(), 1, type, 1, 0, MPI_COMM_WORLD, &request),
                              MPI_SUCCESS);
                    ASSERT_EQ(MPI_Type_free(&type), MPI_SUCCESS);
                    MPI_Datatype other = decoy();
                    for (int round = 0; round < kRounds; ++round) {
                      ASSERT_EQ(MPI_Start(&request), MPI_SUCCESS);
                      ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
                    }
                    ASSERT_EQ(MPI_Request_free(&request), MPI_SUCCESS);
                    MPI_Type_free(&other);
                  } else {
                    for (int round = 0; round < kRounds; ++round) {
                      std::vector<int> received(8, -1);
                      MPI_Recv(received.data(), 8, MPI_INT, 0, 0, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE);
                      expect_every_third(received);
                    }
                  }
                },
                kNoEager),
            0);
}

// Decimal concatenation, b = "a" "b": associative, not commutative, so wrong operands or a wrong
// function show. Over the ints of `*len` elements of the operation's datatype.
void concatenate(void* in, void* inout, int* len, MPI_Datatype* type) {
  int size = 0;
  MPI_Type_size(*type, &size);
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len * size / static_cast<int>(sizeof(int)); ++i) {
    int scale = 10;
    while (scale <= b[i]) scale *= 10;
    b[i] = a[i] * scale + b[i];
  }
}

void subtract(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] - b[i];
}

// ranks 0..n-1 contribute rank + 1: the fold in rank order gives the digits 1 2 3 ... n.
int digits(int ranks) {
  int value = 0;
  for (int r = 1; r <= ranks; ++r) value = value * 10 + r;
  return value;
}

// Every rank frees its operation and type right after MPI_Iallreduce; rank 0 issues first and
// the others only after rank 0 has freed its own (told by a message: collectives would have to
// come in the same order everywhere).
TEST(FreeWhilePending, IallreduceUserOpAndType) {
  constexpr int kRanks = 3;
  ASSERT_EQ(run_ranks(kRanks, 2,
                      [](int rank) {
                        MPI_Op op = MPI_OP_NULL;
                        ASSERT_EQ(MPI_Op_create(concatenate, 0, &op), MPI_SUCCESS);
                        MPI_Datatype pair = MPI_DATATYPE_NULL;
                        ASSERT_EQ(MPI_Type_contiguous(2, MPI_INT, &pair), MPI_SUCCESS);
                        ASSERT_EQ(MPI_Type_commit(&pair), MPI_SUCCESS);
                        const int in[2] = {rank + 1, rank + 1};
                        int out[2] = {-1, -1};
                        MPI_Request request = MPI_REQUEST_NULL;
                        int token = 0;
                        if (rank != 0) {
                          MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        }
                        ASSERT_EQ(MPI_Iallreduce(in, out, 1, pair, op, MPI_COMM_WORLD, &request),
                                  MPI_SUCCESS);
                        ASSERT_EQ(MPI_Op_free(&op), MPI_SUCCESS);
                        ASSERT_EQ(MPI_Type_free(&pair), MPI_SUCCESS);
                        MPI_Op other_op = MPI_OP_NULL;
                        MPI_Op_create(subtract, 1, &other_op);
                        MPI_Datatype other = decoy();
                        for (int r = 1; rank == 0 && r < kRanks; ++r) {
                          MPI_Send(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD);
                        }
                        ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
                        EXPECT_EQ(out[0], digits(kRanks));
                        EXPECT_EQ(out[1], digits(kRanks));
                        MPI_Op_free(&other_op);
                        MPI_Type_free(&other);
                      }),
            0);
}

// A persistent reduction keeps its operation across starts after MPI_Op_free.
TEST(FreeWhilePending, PersistentAllreduceUserOp) {
  constexpr int kRanks = 2;
  ASSERT_EQ(run_ranks(kRanks, 2,
                      [](int rank) {
                        MPI_Op op = MPI_OP_NULL;
                        ASSERT_EQ(MPI_Op_create(concatenate, 0, &op), MPI_SUCCESS);
                        int in = rank + 1;
                        int out = -1;
                        MPI_Request request = MPI_REQUEST_NULL;
                        ASSERT_EQ(MPI_Allreduce_init(&in, &out, 1, MPI_INT, op, MPI_COMM_WORLD,
                                                     MPI_INFO_NULL, &request),
                                  MPI_SUCCESS);
                        ASSERT_EQ(MPI_Op_free(&op), MPI_SUCCESS);
                        MPI_Op other_op = MPI_OP_NULL;
                        MPI_Op_create(subtract, 1, &other_op);
                        for (int round = 0; round < 3; ++round) {
                          ASSERT_EQ(MPI_Start(&request), MPI_SUCCESS);
                          ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
                          EXPECT_EQ(out, digits(kRanks));
                        }
                        ASSERT_EQ(MPI_Request_free(&request), MPI_SUCCESS);
                        MPI_Op_free(&other_op);
                      }),
            0);
}

}  // namespace
