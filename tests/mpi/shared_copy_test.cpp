// Large copies shared by two cores (mpi/request/shared_copy.h): the chunked copy itself under
// helpers that hammer it, then point-to-point and RMA transfers around its size boundaries, from
// unaligned buffers, with derived datatypes that must take the plain path, and many at once.
#include "request/shared_copy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <tuple>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::mpi::SharedCopy;
using weft::testing::run_ranks;
using weft::testing::Shared;

// The jobs below run with the default mpi.shared_copy_min.
constexpr std::size_t kMin = SharedCopy::kDefaultMinBytes;
constexpr std::size_t kChunk = SharedCopy::kChunkBytes;

unsigned char pattern(std::size_t i, int seed) {
  return static_cast<unsigned char>((i * 131 + static_cast<std::size_t>(seed) * 7 + 1) & 0xff);
}

void fill(unsigned char* data, std::size_t bytes, int seed) {
  for (std::size_t i = 0; i < bytes; ++i) data[i] = pattern(i, seed);
}

// The first wrong byte, or -1.
long first_wrong(const unsigned char* data, std::size_t bytes, int seed) {
  for (std::size_t i = 0; i < bytes; ++i) {
    if (data[i] != pattern(i, seed)) return static_cast<long>(i);
  }
  return -1;
}

// Sizes either side of a chunk and of the sharing threshold, and a large odd one.
const std::vector<std::size_t> kSizes = {1,        kChunk - 1,    kChunk,   kChunk + 1,
                                         kMin - 1, kMin,          kMin + 1, kMin + kChunk + 3,
                                         3 * kMin, (4u << 20) + 5};

TEST(SharedCopyChunks, EveryByteArrivesWhileHelpersClaimChunks) {
  SharedCopy copy;
  std::atomic<bool> stop{false};
  std::vector<std::thread> helpers;
  for (int h = 0; h < 3; ++h) {
    helpers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) copy.help();
    });
  }
  const std::size_t largest = kSizes.back();
  std::vector<unsigned char> src(largest + 16), dst(largest + 16);
  int seed = 0;
  for (int round = 0; round < 20; ++round) {
    for (std::size_t bytes : kSizes) {
      // Unaligned on both sides, and differently so.
      unsigned char* from = src.data() + 1 + round % 5;
      unsigned char* to = dst.data() + 3 + round % 7;
      fill(from, bytes, ++seed);
      std::fill(dst.begin(), dst.end(), 0);
      copy.run(to, from, bytes);
      ASSERT_EQ(first_wrong(to, bytes, seed), -1) << bytes << " bytes, round " << round;
      // Nothing written past the end.
      ASSERT_EQ(to[bytes], 0) << bytes << " bytes";
      ASSERT_EQ(to[-1], 0) << bytes << " bytes";
    }
  }
  stop = true;
  for (std::thread& helper : helpers) helper.join();
}

// (ranks, virtual processors)
class SharedCopyJobs : public ::testing::TestWithParam<std::tuple<int, int>> {};

// Rank 0 sends every size to rank 1 from an unaligned buffer into an unaligned one, once with the
// receive posted first (the sender copies, the receiver helps) and once with the send queued
// first (the receiver copies, the sender helps), blocking and nonblocking.
TEST_P(SharedCopyJobs, PointToPointAroundTheBoundaries) {
  WEFT_ONE_PROCESS_ONLY("the shared copy is the single-copy path inside a process");
  const auto [ranks, vps] = GetParam();
  Shared<std::atomic<int>> checked(0);
  const int status = run_ranks(ranks, vps, [&](int rank) {
    if (rank > 1) {  // only in the barriers
      for (std::size_t i = 0; i < 2 * kSizes.size() + 1; ++i) MPI_Barrier(MPI_COMM_WORLD);
      return;
    }
    const std::size_t largest = kSizes.back();
    std::vector<unsigned char> buffer(largest + 8);
    int seed = 100;
    for (std::size_t bytes : kSizes) {
      const int count = static_cast<int>(bytes);
      for (int order = 0; order < 2; ++order) {
        ++seed;
        unsigned char* data = buffer.data() + (rank == 0 ? 1 : 3);
        if (rank == 0) {
          fill(data, bytes, seed);
          if (order == 0) {
            MPI_Barrier(MPI_COMM_WORLD);  // after rank 1 posted its receive
            MPI_Send(data, count, MPI_BYTE, 1, seed, MPI_COMM_WORLD);
          } else {
            MPI_Request request;
            MPI_Isend(data, count, MPI_BYTE, 1, seed, MPI_COMM_WORLD, &request);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
          }
        } else {
          std::fill(buffer.begin(), buffer.end(), 0);
          MPI_Status status;
          if (order == 0) {
            MPI_Request request;
            MPI_Irecv(data, count, MPI_BYTE, 0, seed, MPI_COMM_WORLD, &request);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Wait(&request, &status);
          } else {
            MPI_Barrier(MPI_COMM_WORLD);  // after rank 0 queued its send
            MPI_Recv(data, count, MPI_BYTE, 0, seed, MPI_COMM_WORLD, &status);
          }
          int received = 0;
          MPI_Get_count(&status, MPI_BYTE, &received);
          EXPECT_EQ(received, count);
          EXPECT_EQ(first_wrong(data, bytes, seed), -1) << bytes << " bytes, order " << order;
          EXPECT_EQ(data[bytes], 0) << bytes << " bytes";
        }
      }
    }
    checked->fetch_add(1);
    MPI_Barrier(MPI_COMM_WORLD);
  });
  EXPECT_EQ(status, 0);
  if (!IsSkipped()) {
    EXPECT_EQ(checked->load(), 2);
  }
}

// A strided receive of a large message is no single block: it must take the plain copy and still
// place every element.
TEST_P(SharedCopyJobs, DerivedDatatypeTakesThePlainCopy) {
  WEFT_ONE_PROCESS_ONLY("the shared copy is the single-copy path inside a process");
  const auto [ranks, vps] = GetParam();
  Shared<std::atomic<int>> checked(0);
  const int status = run_ranks(ranks, vps, [&](int rank) {
    const int ints = static_cast<int>(2 * kMin / sizeof(int)) + 3;
    if (rank == 0) {
      std::vector<int> out(static_cast<std::size_t>(ints));
      for (int i = 0; i < ints; ++i) out[static_cast<std::size_t>(i)] = i * 3 + 1;
      MPI_Send(out.data(), ints, MPI_INT, 1, 0, MPI_COMM_WORLD);
      // And a strided send into a contiguous receive.
      std::vector<int> strided(2 * out.size(), -1);
      for (int i = 0; i < ints; ++i) strided[2 * static_cast<std::size_t>(i)] = i * 5 + 2;
      MPI_Datatype every_other;
      MPI_Type_vector(ints, 1, 2, MPI_INT, &every_other);
      MPI_Type_commit(&every_other);
      MPI_Send(strided.data(), 1, every_other, 1, 1, MPI_COMM_WORLD);
      MPI_Type_free(&every_other);
      checked->fetch_add(1);
    } else if (rank == 1) {
      std::vector<int> in(2 * static_cast<std::size_t>(ints), -1);
      MPI_Datatype every_other;
      MPI_Type_vector(ints, 1, 2, MPI_INT, &every_other);
      MPI_Type_commit(&every_other);
      MPI_Recv(in.data(), 1, every_other, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Type_free(&every_other);
      int wrong = 0;
      for (int i = 0; i < ints; ++i) {
        const auto at = 2 * static_cast<std::size_t>(i);
        if (in[at] != i * 3 + 1 || in[at + 1] != -1) ++wrong;
      }
      EXPECT_EQ(wrong, 0);
      std::vector<int> flat(static_cast<std::size_t>(ints), -1);
      MPI_Recv(flat.data(), ints, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      wrong = 0;
      for (int i = 0; i < ints; ++i) wrong += flat[static_cast<std::size_t>(i)] != i * 5 + 2;
      EXPECT_EQ(wrong, 0);
      checked->fetch_add(1);
    }
  });
  EXPECT_EQ(status, 0);
  if (!IsSkipped()) {
    EXPECT_EQ(checked->load(), 2);
  }
}

// Every rank sends a large message to every other at once, in both orders of post and send.
TEST_P(SharedCopyJobs, ManyLargeMessagesAtOnce) {
  const auto [ranks, vps] = GetParam();
  Shared<std::atomic<int>> checked(0);
  const int status = run_ranks(ranks, vps, [&](int rank) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::size_t bytes = kMin + kChunk + 5;
    const int count = static_cast<int>(bytes);
    const auto n = static_cast<std::size_t>(size);
    std::vector<unsigned char> out(bytes + 1), in(n * (bytes + 1), 0);
    fill(out.data() + 1, bytes, rank);
    for (int round = 0; round < 3; ++round) {
      std::vector<MPI_Request> requests;
      for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        MPI_Request request;
        MPI_Irecv(in.data() + static_cast<std::size_t>(peer) * (bytes + 1), count, MPI_BYTE, peer,
                  round, MPI_COMM_WORLD, &request);
        requests.push_back(request);
      }
      for (int k = 1; k < size; ++k) {
        // Half the rounds send before the receives of the later peers are posted.
        const int peer = round % 2 == 0 ? (rank + k) % size : (rank + size - k) % size;
        MPI_Request request;
        MPI_Isend(out.data() + 1, count, MPI_BYTE, peer, round, MPI_COMM_WORLD, &request);
        requests.push_back(request);
      }
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
      for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        EXPECT_EQ(
            first_wrong(in.data() + static_cast<std::size_t>(peer) * (bytes + 1), bytes, peer), -1)
            << "from " << peer << " round " << round;
      }
    }
    checked->fetch_add(1);
  });
  EXPECT_EQ(status, 0);
  if (!IsSkipped()) {
    EXPECT_EQ(checked->load(), ranks);
  }
}

// Puts and gets around the boundaries at unaligned displacements, under lock_all and under fence,
// and a put from the origin's own window onto itself, overlapping (the plain memmove).
TEST_P(SharedCopyJobs, PutAndGetAroundTheBoundaries) {
  const auto [ranks, vps] = GetParam();
  Shared<std::atomic<int>> checked(0);
  const int status = run_ranks(ranks, vps, [&](int rank) {
    const std::size_t largest = kSizes.back();
    const std::size_t window_bytes = largest + 64;
    unsigned char* base = nullptr;
    MPI_Win win;
    MPI_Win_allocate(static_cast<MPI_Aint>(window_bytes), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    std::vector<unsigned char> origin(largest + 8);
    int seed = 200;
    for (std::size_t bytes : kSizes) {
      const int count = static_cast<int>(bytes);
      ++seed;
      // Put under fence: rank 0 into rank 1 at displacement 5.
      std::fill(base, base + window_bytes, 0);
      MPI_Win_fence(0, win);
      if (rank == 0) {
        fill(origin.data() + 1, bytes, seed);
        MPI_Put(origin.data() + 1, count, MPI_BYTE, 1, 5, count, MPI_BYTE, win);
      }
      MPI_Win_fence(0, win);
      if (rank == 1) {
        EXPECT_EQ(first_wrong(base + 5, bytes, seed), -1) << "put of " << bytes;
        EXPECT_EQ(base[5 + bytes], 0) << "put of " << bytes;
        fill(base + 7, bytes, seed + 1000);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      // Get under lock_all: rank 0 from rank 1's displacement 7 into an unaligned buffer.
      if (rank == 0) {
        std::fill(origin.begin(), origin.end(), 0);
        MPI_Win_lock_all(0, win);
        MPI_Get(origin.data() + 3, count, MPI_BYTE, 1, 7, count, MPI_BYTE, win);
        MPI_Win_flush(1, win);
        MPI_Win_unlock_all(win);
        EXPECT_EQ(first_wrong(origin.data() + 3, bytes, seed + 1000), -1) << "get of " << bytes;
        EXPECT_EQ(origin[3 + bytes], 0) << "get of " << bytes;
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    // Overlapping: each rank moves the first 3 * kMin bytes of its own window up by 1000 bytes.
    const std::size_t bytes = 3 * kMin;
    fill(base, bytes, rank);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    MPI_Put(base, static_cast<int>(bytes), MPI_BYTE, rank, 1000, static_cast<int>(bytes), MPI_BYTE,
            win);
    MPI_Win_unlock(rank, win);
    EXPECT_EQ(first_wrong(base + 1000, bytes, rank), -1);
    MPI_Win_free(&win);
    checked->fetch_add(1);
  });
  EXPECT_EQ(status, 0);
  if (!IsSkipped()) {
    EXPECT_EQ(checked->load(), ranks);
  }
}

// Two ranks on one and on two cores, and eight ranks on two cores (oversubscribed: helpers then
// find their core's other ranks ready).
INSTANTIATE_TEST_SUITE_P(Jobs, SharedCopyJobs,
                         ::testing::Values(std::make_tuple(2, 1), std::make_tuple(2, 2),
                                           std::make_tuple(8, 2)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks" +
                                  std::to_string(std::get<1>(info.param)) + "vps";
                         });

}  // namespace
