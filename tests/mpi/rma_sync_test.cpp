// Each synchronization mode of one-sided communication with concurrent ranks, on one core (the
// ranks interleave only when a wait yields) and on several, and accumulates under contention:
// every update must land exactly once, whatever path (atomic instruction or stripe lock) the
// datatype takes.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::run_ranks;

constexpr int kRanks = 4;

// The number of virtual processors of the job: 1 (one core) or 2.
class RmaSync : public ::testing::TestWithParam<int> {};

// A window of `n` longs per rank, zeroed, made with MPI_Win_create or MPI_Win_allocate.
struct Window {
  Window(int n, bool allocate) {
    if (allocate) {
      MPI_Win_allocate(n * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    } else {
      own.assign(static_cast<std::size_t>(n), 0);
      base = own.data();
      MPI_Win_create(base, n * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    std::fill(base, base + n, 0L);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~Window() { MPI_Win_free(&win); }
  std::vector<long> own;
  long* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
};

TEST_P(RmaSync, FenceRingPutGetAccumulate) {
  EXPECT_EQ(run_ranks(kRanks, GetParam(),
                      [](int rank) {
                        for (bool allocate : {false, true}) {
                          Window w(kRanks + 2, allocate);
                          const int right = (rank + 1) % kRanks;
                          const int left = (rank + kRanks - 1) % kRanks;
                          for (int round = 1; round <= 5; ++round) {
                            MPI_Win_fence(0, w.win);
                            long value = round * 100 + rank;
                            MPI_Put(&value, 1, MPI_LONG, right, rank, 1, MPI_LONG, w.win);
                            long one = round;
                            MPI_Accumulate(&one, 1, MPI_LONG, 0, kRanks, 1, MPI_LONG, MPI_SUM,
                                           w.win);
                            MPI_Win_fence(0, w.win);
                            EXPECT_EQ(w.base[left], round * 100 + left);
                            long got = -1;
                            MPI_Get(&got, 1, MPI_LONG, right, rank, 1, MPI_LONG, w.win);
                            MPI_Win_fence(0, w.win);
                            EXPECT_EQ(got, round * 100 + rank);
                          }
                          MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
                          if (rank == 0) {
                            EXPECT_EQ(w.base[kRanks], 15L * kRanks);
                          }
                        }
                      }),
            0);
}

TEST_P(RmaSync, PostStartCompleteWaitWithNeighbours) {
  EXPECT_EQ(run_ranks(kRanks, GetParam(),
                      [](int rank) {
                        Window w(4, false);
                        const int right = (rank + 1) % kRanks;
                        const int left = (rank + kRanks - 1) % kRanks;
                        MPI_Group world, neighbours;
                        MPI_Win_get_group(w.win, &world);
                        const int both[2] = {left, right};
                        MPI_Group_incl(world, 2, both, &neighbours);
                        for (int round = 1; round <= 20; ++round) {
                          MPI_Win_post(neighbours, 0, w.win);
                          MPI_Win_start(neighbours, 0, w.win);
                          long value = round * 10 + rank;
                          MPI_Put(&value, 1, MPI_LONG, right, 0, 1, MPI_LONG, w.win);
                          MPI_Put(&value, 1, MPI_LONG, left, 1, 1, MPI_LONG, w.win);
                          MPI_Win_complete(w.win);
                          if (round % 2 == 0) {
                            int flag = 0;
                            while (!flag) MPI_Win_test(w.win, &flag);
                          } else {
                            MPI_Win_wait(w.win);
                          }
                          EXPECT_EQ(w.base[0], round * 10 + left);
                          EXPECT_EQ(w.base[1], round * 10 + right);
                        }
                        MPI_Group_free(&neighbours);
                        MPI_Group_free(&world);
                      }),
            0);
}

// A read-modify-write under an exclusive lock is never interleaved with another rank's.
TEST_P(RmaSync, ExclusiveLockSerializesReadModifyWrite) {
  EXPECT_EQ(run_ranks(kRanks, GetParam(),
                      [](int rank) {
                        Window w(1, false);
                        constexpr int kRounds = 200;
                        for (int i = 0; i < kRounds; ++i) {
                          MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
                          long x = 0;
                          MPI_Get(&x, 1, MPI_LONG, 0, 0, 1, MPI_LONG, w.win);
                          MPI_Win_flush(0, w.win);
                          ++x;
                          MPI_Put(&x, 1, MPI_LONG, 0, 0, 1, MPI_LONG, w.win);
                          MPI_Win_unlock(0, w.win);
                        }
                        MPI_Barrier(MPI_COMM_WORLD);
                        if (rank == 0) {
                          MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
                          EXPECT_EQ(w.base[0], static_cast<long>(kRounds) * kRanks);
                          MPI_Win_unlock(0, w.win);
                        }
                        MPI_Barrier(MPI_COMM_WORLD);
                      }),
            0);
}

TEST_P(RmaSync, LockAllFlushAndRequests) {
  EXPECT_EQ(run_ranks(kRanks, GetParam(),
                      [](int rank) {
                        Window w(kRanks, false);
                        MPI_Win_lock_all(0, w.win);
                        std::vector<MPI_Request> requests;
                        for (int t = 0; t < kRanks; ++t) {
                          long value = rank * 1000 + t;
                          MPI_Request r = MPI_REQUEST_NULL;
                          EXPECT_EQ(MPI_Rput(&value, 1, MPI_LONG, t, rank, 1, MPI_LONG, w.win, &r),
                                    MPI_SUCCESS);
                          requests.push_back(r);
                        }
                        MPI_Waitall(kRanks, requests.data(), MPI_STATUSES_IGNORE);
                        MPI_Win_flush_all(w.win);
                        MPI_Win_flush_local_all(w.win);
                        MPI_Win_unlock_all(w.win);
                        MPI_Barrier(MPI_COMM_WORLD);
                        MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win);
                        for (int t = 0; t < kRanks; ++t) {
                          long got = -1;
                          MPI_Request r = MPI_REQUEST_NULL;
                          MPI_Rget(&got, 1, MPI_LONG, t, (rank + 1) % kRanks, 1, MPI_LONG, w.win,
                                   &r);
                          MPI_Wait(&r, MPI_STATUS_IGNORE);
                          EXPECT_EQ(got, ((rank + 1) % kRanks) * 1000 + t);
                          MPI_Win_flush_local(t, w.win);
                        }
                        MPI_Win_unlock_all(w.win);
                        MPI_Win_sync(w.win);
                        MPI_Barrier(MPI_COMM_WORLD);
                      }),
            0);
}

// A rank polling another's window with MPI_Get and MPI_Win_flush waits for a rank that may share
// its core (one virtual processor): the flush must let that rank run.
TEST_P(RmaSync, FlushPollingLetsARankOfTheSameCoreRun) {
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [](int rank) {
                        Window w(2, false);
                        MPI_Win_lock_all(0, w.win);
                        // Rank 0 waits for a message, so that rank 1 is already polling when
                        // rank 0 can run again.
                        int token = 0;
                        if (rank == 1) {
                          MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
                          long flag = 0;
                          long polls = 0;
                          while (flag == 0) {
                            MPI_Get(&flag, 1, MPI_LONG, 0, 0, 1, MPI_LONG, w.win);
                            MPI_Win_flush(0, w.win);
                            ++polls;
                          }
                          long data = 0;
                          MPI_Get(&data, 1, MPI_LONG, 0, 1, 1, MPI_LONG, w.win);
                          MPI_Win_flush(0, w.win);
                          EXPECT_EQ(data, 42);
                          EXPECT_GT(polls, 0);
                        } else {
                          MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          const long data = 42, flag = 1;
                          MPI_Put(&data, 1, MPI_LONG, 0, 1, 1, MPI_LONG, w.win);
                          MPI_Win_flush(0, w.win);
                          MPI_Put(&flag, 1, MPI_LONG, 0, 0, 1, MPI_LONG, w.win);
                          MPI_Win_flush(0, w.win);
                        }
                        MPI_Win_unlock_all(w.win);
                        MPI_Barrier(MPI_COMM_WORLD);
                      }),
            0);
}

// Every rank adds to the same elements at once, with the operations and types that take the
// atomic path and those that take the stripe locks.
TEST_P(RmaSync, AccumulatesAreAtomicUnderContention) {
  EXPECT_EQ(run_ranks(kRanks, GetParam(),
                      [](int rank) {
                        constexpr int kRounds = 300;
                        for (bool allocate : {false, true}) {
                          // [0] long, [1] double (bytes), [2..3] long double, [4..5] a MPI_LONG_INT
                          // pair (MAXLOC), [6] a ticket counter, [7] a CAS word.
                          Window w(8, allocate);
                          MPI_Win_lock_all(0, w.win);
                          long tickets_seen = 0;
                          for (int i = 0; i < kRounds; ++i) {
                            long one = 1;
                            MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w.win);
                            double half = 0.5;
                            MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, 1, 1, MPI_DOUBLE, MPI_SUM,
                                           w.win);
                            long double quarter = 0.25L;
                            MPI_Accumulate(&quarter, 1, MPI_LONG_DOUBLE, 0, 2, 1, MPI_LONG_DOUBLE,
                                           MPI_SUM, w.win);
                            struct {
                              long value;
                              int index;
                            } pair{static_cast<long>(i) * kRanks + rank, rank}, unused;
                            MPI_Get_accumulate(&pair, 1, MPI_LONG_INT, &unused, 1, MPI_LONG_INT, 0,
                                               4, 1, MPI_LONG_INT, MPI_MAXLOC, w.win);
                            long ticket = -1;
                            MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, 6, MPI_SUM, w.win);
                            tickets_seen += ticket;
                          }
                          MPI_Win_flush_all(w.win);
                          MPI_Win_unlock_all(w.win);
                          // The tickets are 0..n-1, each drawn once.
                          long tickets_total = 0;
                          MPI_Reduce(&tickets_seen, &tickets_total, 1, MPI_LONG, MPI_SUM, 0,
                                     MPI_COMM_WORLD);
                          MPI_Barrier(MPI_COMM_WORLD);
                          if (rank == 0) {
                            const long n = static_cast<long>(kRounds) * kRanks;
                            EXPECT_EQ(w.base[0], n);
                            double sum = 0;
                            std::memcpy(&sum, &w.base[1], sizeof sum);
                            EXPECT_EQ(sum, 0.5 * n);
                            long double wide = 0;
                            std::memcpy(&wide, &w.base[2], sizeof wide);
                            EXPECT_EQ(wide, 0.25L * n);
                            EXPECT_EQ(w.base[4], n - 1);
                            EXPECT_EQ(w.base[6], n);
                            EXPECT_EQ(tickets_total, n * (n - 1) / 2);
                          }
                          // One winner of a compare-and-swap race.
                          MPI_Barrier(MPI_COMM_WORLD);
                          if (rank == 0) w.base[7] = -1;
                          MPI_Barrier(MPI_COMM_WORLD);
                          MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
                          long me = rank, expected = -1, old = 0;
                          MPI_Compare_and_swap(&me, &expected, &old, MPI_LONG, 0, 7, w.win);
                          MPI_Win_unlock(0, w.win);
                          int won = old == -1 ? 1 : 0, winners = 0;
                          MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                          EXPECT_EQ(winners, 1);
                        }
                      }),
            0);
}

// The bitwise operations, one instruction per element, with and without the old value, on many
// elements at once and on one: none may lose another's update.
TEST_P(RmaSync, BitwiseAccumulatesAreAtomicUnderContention) {
  EXPECT_EQ(run_ranks(kRanks, GetParam(),
                      [](int rank) {
                        constexpr int kRounds = 200;
                        constexpr int kElements = 64;
                        for (bool allocate : {false, true}) {
                          // [0..63] xor'ed as a block; [64] or'ed one bit at a time with the old
                          // value fetched; [65] and'ed.
                          Window w(kElements + 2, allocate);
                          if (rank == 0) w.base[kElements + 1] = -1;
                          MPI_Barrier(MPI_COMM_WORLD);
                          MPI_Win_lock_all(0, w.win);
                          std::vector<long> pattern(kElements);
                          for (int i = 0; i < kRounds; ++i) {
                            const long value = (static_cast<long>(i) * 7919 + rank * 104729) | 1;
                            std::fill(pattern.begin(), pattern.end(), value);
                            MPI_Accumulate(pattern.data(), kElements, MPI_LONG, 0, 0, kElements,
                                           MPI_LONG, MPI_BXOR, w.win);
                            // The same element alone, by the single-element way.
                            MPI_Accumulate(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_BXOR, w.win);
                            if (i < 16) {
                              const unsigned long first = 1UL << (rank * 16), bit = first << i;
                              const unsigned long mask = bit - first;
                              unsigned long old = 0;
                              MPI_Fetch_and_op(&bit, &old, MPI_UNSIGNED_LONG, 0, kElements, MPI_BOR,
                                               w.win);
                              EXPECT_EQ(old & bit, 0UL);
                              EXPECT_EQ(old & mask,
                                        mask);  // this rank's earlier bits are all there
                              const unsigned long cleared = ~bit;
                              MPI_Accumulate(&cleared, 1, MPI_UNSIGNED_LONG, 0, kElements + 1, 1,
                                             MPI_UNSIGNED_LONG, MPI_BAND, w.win);
                            }
                          }
                          MPI_Win_unlock_all(w.win);
                          // Every rank's block xor is cancelled by its single-element xor on
                          // element 0 only; the other elements hold the xor of every value of every
                          // rank.
                          long all = 0;
                          for (int r = 0; r < kRanks; ++r) {
                            for (int i = 0; i < kRounds; ++i) {
                              all ^= (static_cast<long>(i) * 7919 + r * 104729) | 1;
                            }
                          }
                          MPI_Barrier(MPI_COMM_WORLD);
                          if (rank == 0) {
                            MPI_Win_sync(w.win);
                            EXPECT_EQ(w.base[0], 0);
                            for (int e = 1; e < kElements; ++e) EXPECT_EQ(w.base[e], all) << e;
                            unsigned long ors = 0;
                            for (int r = 0; r < kRanks; ++r) ors |= 0xffffUL << (r * 16);
                            EXPECT_EQ(static_cast<unsigned long>(w.base[kElements]), ors);
                            EXPECT_EQ(static_cast<unsigned long>(w.base[kElements + 1]), ~ors);
                          }
                          MPI_Barrier(MPI_COMM_WORLD);
                        }
                      }),
            0);
}

// Non-contiguous datatypes on both sides.
TEST_P(RmaSync, DerivedDatatypes) {
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [](int rank) {
                        Window w(16, false);
                        MPI_Datatype every_other;
                        MPI_Type_vector(4, 1, 2, MPI_LONG, &every_other);
                        MPI_Type_commit(&every_other);
                        const long source[4] = {1, 2, 3, 4};
                        const int other = 1 - rank;
                        MPI_Win_fence(0, w.win);
                        MPI_Put(source, 4, MPI_LONG, other, 1, 1, every_other, w.win);
                        MPI_Accumulate(source, 4, MPI_LONG, other, 9, 1, every_other, MPI_SUM,
                                       w.win);
                        MPI_Win_fence(0, w.win);
                        for (int i = 0; i < 4; ++i) {
                          EXPECT_EQ(w.base[1 + 2 * i], i + 1);
                          EXPECT_EQ(w.base[2 + 2 * i], 0);
                          EXPECT_EQ(w.base[9 + 2 * i], i + 1);
                        }
                        long back[4] = {};
                        MPI_Get(back, 4, MPI_LONG, other, 1, 1, every_other, w.win);
                        MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
                        for (int i = 0; i < 4; ++i) EXPECT_EQ(back[i], i + 1);
                        MPI_Type_free(&every_other);
                      }),
            0);
}

// Contiguous types take the shortest path (one copy of count * size bytes), also when their data
// starts past their lower bound, and large transfers move whole, on both flavors (between
// processes: load/store into the shared segment, or one cross-memory copy of the whole run).
TEST_P(RmaSync, ContiguousTypesOffsetFromTheirStartAndLargeTransfers) {
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [](int rank) {
                        constexpr int kLongs = 1 << 17;  // 1 MiB
                        for (bool allocate : {false, true}) {
                          Window w(kLongs, allocate);
                          // Two longs 8 bytes past the start: lb 8, extent = size = 16.
                          MPI_Datatype shifted;
                          const int length = 2;
                          const MPI_Aint displacement = 8;
                          MPI_Type_create_hindexed(1, &length, &displacement, MPI_LONG, &shifted);
                          MPI_Type_commit(&shifted);
                          const int other = 1 - rank;
                          const long source[7] = {-1, 1, 2, 3, 4, 5, 6};
                          std::vector<long> large(kLongs / 2);
                          for (std::size_t i = 0; i < large.size(); ++i) {
                            large[i] = static_cast<long>(i) * 3 + rank;
                          }
                          MPI_Win_fence(0, w.win);
                          MPI_Put(source, 3, shifted, other, 10, 6, MPI_LONG, w.win);
                          MPI_Put(source + 1, 6, MPI_LONG, other, 20, 3, shifted, w.win);
                          MPI_Put(large.data(), kLongs / 2, MPI_LONG, other, kLongs / 2, kLongs / 2,
                                  MPI_LONG, w.win);
                          MPI_Win_fence(0, w.win);
                          for (int i = 0; i < 6; ++i) {
                            EXPECT_EQ(w.base[10 + i], i + 1);
                            EXPECT_EQ(w.base[21 + i], i + 1);
                          }
                          EXPECT_EQ(w.base[20], 0);
                          EXPECT_EQ(w.base[27], 0);
                          for (int i = 0; i < kLongs / 2; ++i) {
                            if (w.base[kLongs / 2 + i] != i * 3L + other) {
                              ADD_FAILURE() << "long " << i << " of the large put";
                              break;
                            }
                          }
                          long back[7] = {-7, -7, -7, -7, -7, -7, -7};
                          std::vector<long> large_back(kLongs / 2, -1);
                          MPI_Get(back, 3, shifted, other, 21, 6, MPI_LONG, w.win);
                          MPI_Get(large_back.data(), kLongs / 2, MPI_LONG, other, kLongs / 2,
                                  kLongs / 2, MPI_LONG, w.win);
                          MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
                          EXPECT_EQ(back[0], -7);
                          for (int i = 0; i < 6; ++i) EXPECT_EQ(back[1 + i], i + 1);
                          EXPECT_EQ(large_back, large);
                          MPI_Type_free(&shifted);
                        }
                      }),
            0);
}

INSTANTIATE_TEST_SUITE_P(Cores, RmaSync, ::testing::Values(1, 2));

}  // namespace
