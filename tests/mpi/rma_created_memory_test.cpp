// MPI_Win_create's memory across processes (mpi/rma/exposed_memory.h): the pages that hold only
// the window's bytes move onto a segment the other processes map, at the same addresses and with
// the same contents, and move back at MPI_Win_free; bytes on pages shared with other data stay
// where they were and are reached by cross-memory attach. Run in one process and spread over 2
// and 4 (tests/CMakeLists.txt); the checks on mappings hold where the two ranks are apart.
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::run_ranks;

// Whether a mapping of one of this process's window segments covers `address`.
bool on_a_window_segment(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("/weft-win-" + std::to_string(getpid()) + "-") == std::string::npos) continue;
    const std::uintptr_t start = std::stoull(line, nullptr, 16);
    const std::uintptr_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (start <= at && at < end) return true;
  }
  return false;
}

// Whether the other rank of a 2-rank job runs in another process.
bool apart() {
  int pid = getpid(), differ = 0;
  MPI_Allreduce(&pid, &differ, 1, MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
  return differ != 0;
}

// A large malloc (a block glibc maps for itself): every page of the window moves, so the other
// process reaches all of it by load and store, and MPI_Win_shared_query gives it.
TEST(RmaCreatedMemory, LargeMallocMovesWholeAndComesBack) {
  EXPECT_EQ(
      run_ranks(
          2, 2,
          [](int rank) {
            const bool separate = apart();
            // A fixed threshold: a block of this size is mapped for itself even after
            // the process freed larger ones.
            mallopt(M_MMAP_THRESHOLD, 256 << 10);
            constexpr std::size_t kBytes = 1 << 20;
            auto* memory = static_cast<unsigned char*>(std::malloc(kBytes));
            ASSERT_NE(memory, nullptr);
            for (std::size_t i = 0; i < kBytes; ++i) {
              memory[i] = static_cast<unsigned char>(i * 7 + rank);
            }
            MPI_Win win = MPI_WIN_NULL;
            ASSERT_EQ(MPI_Win_create(memory, kBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                      MPI_SUCCESS);
            // The contents stayed through the move.
            EXPECT_EQ(memory[0], static_cast<unsigned char>(rank));
            EXPECT_EQ(memory[kBytes - 1], static_cast<unsigned char>((kBytes - 1) * 7 + rank));
            EXPECT_EQ(on_a_window_segment(memory), separate);
            EXPECT_EQ(on_a_window_segment(memory + kBytes - 1), separate);
            const int other = 1 - rank;
            MPI_Aint size = 0;
            int unit = 0;
            unsigned char* there = nullptr;
            EXPECT_EQ(MPI_Win_shared_query(win, other, &size, &unit, &there), MPI_SUCCESS);
            ASSERT_NE(there, nullptr);
            EXPECT_EQ(size, static_cast<MPI_Aint>(kBytes));
            EXPECT_EQ(there[kBytes / 2], static_cast<unsigned char>((kBytes / 2) * 7 + other));
            MPI_Barrier(MPI_COMM_WORLD);  // both looked before either puts

            MPI_Win_lock_all(0, win);
            const unsigned char mark[3] = {200, 201, static_cast<unsigned char>(rank)};
            for (MPI_Aint at : {MPI_Aint{0}, MPI_Aint{4093}, MPI_Aint{kBytes - 3}}) {
              MPI_Put(mark, 3, MPI_BYTE, other, at, 3, MPI_BYTE, win);
            }
            MPI_Win_flush(other, win);
            unsigned char back[3] = {};
            MPI_Get(back, 3, MPI_BYTE, other, 4093, 3, MPI_BYTE, win);
            MPI_Win_flush(other, win);
            EXPECT_EQ(std::memcmp(back, mark, 3), 0);
            MPI_Win_unlock_all(win);
            MPI_Barrier(MPI_COMM_WORLD);
            for (std::size_t at : {std::size_t{0}, std::size_t{4093}, kBytes - 3}) {
              EXPECT_EQ(memory[at], 200);
              EXPECT_EQ(memory[at + 2], static_cast<unsigned char>(other));
            }
            ASSERT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
            // Private again, with what the other rank put.
            EXPECT_FALSE(on_a_window_segment(memory));
            EXPECT_EQ(memory[4094], 201);
            EXPECT_EQ(memory[kBytes / 2], static_cast<unsigned char>((kBytes / 2) * 7 + rank));
            std::free(memory);
          }),
      0);
}

// A window inside a heap block, sharing its first and last page with other data: only the pages
// wholly inside move; accesses across the edges, and accumulates there, still land; the data
// around the window on the same pages stays the process's own.
TEST(RmaCreatedMemory, EdgesSharedWithOtherDataStayAndStillWork) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        const bool separate = apart();
                        constexpr int kCount = 5000;  // longs: about 10 pages
                        std::vector<long> block(kCount + 64, -1);
                        // Neither end on a page boundary.
                        long* window = block.data() + 32;
                        const auto aligned = [](const long* p) {
                          return reinterpret_cast<std::uintptr_t>(p) % 4096 == 0;
                        };
                        while (aligned(window) || aligned(window + kCount)) ++window;
                        for (int i = 0; i < kCount; ++i) window[i] = i;
                        MPI_Win win = MPI_WIN_NULL;
                        ASSERT_EQ(MPI_Win_create(window, kCount * 8, 8, MPI_INFO_NULL,
                                                 MPI_COMM_WORLD, &win),
                                  MPI_SUCCESS);
                        block[0] = 7;  // beside the window on its first page, after the move
                        EXPECT_FALSE(on_a_window_segment(window));
                        EXPECT_EQ(on_a_window_segment(window + kCount / 2), separate);
                        EXPECT_FALSE(on_a_window_segment(window + kCount - 1));
                        const int other = 1 - rank;
                        std::vector<long> ones(kCount, 1);
                        MPI_Win_lock_all(0, win);
                        // The whole window: across both edges and the pages between.
                        MPI_Accumulate(ones.data(), kCount, MPI_LONG, other, 0, kCount, MPI_LONG,
                                       MPI_SUM, win);
                        MPI_Win_flush(other, win);
                        std::vector<long> seen(kCount, 0);
                        MPI_Get(seen.data(), kCount, MPI_LONG, other, 0, kCount, MPI_LONG, win);
                        MPI_Win_flush(other, win);
                        for (int i = 0; i < kCount; i += 97) EXPECT_EQ(seen[i], i + 1) << i;
                        EXPECT_EQ(seen[kCount - 1], kCount);
                        MPI_Win_unlock_all(win);
                        MPI_Barrier(MPI_COMM_WORLD);
                        EXPECT_EQ(window[0], 1);
                        EXPECT_EQ(window[kCount - 1], kCount);
                        EXPECT_EQ(block[0], 7);
                        EXPECT_EQ(block[kCount + 63], -1);
                        ASSERT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
                        EXPECT_FALSE(on_a_window_segment(window + kCount / 2));
                        EXPECT_EQ(window[kCount / 2], kCount / 2 + 1);
                      }),
            0);
}

// Fetch-and-op and accumulates from both ranks on one element of a moved window: atomic
// instructions on the shared pages across processes, against the target's own.
TEST(RmaCreatedMemory, AtomicsOnMovedPagesAcrossProcesses) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        constexpr int kRounds = 2000;
                        mallopt(M_MMAP_THRESHOLD, 256 << 10);
                        constexpr std::size_t kBytes = 512 << 10;
                        auto* memory = static_cast<long*>(std::calloc(kBytes / 8, 8));
                        ASSERT_NE(memory, nullptr);
                        MPI_Win win = MPI_WIN_NULL;
                        ASSERT_EQ(
                            MPI_Win_create(memory, kBytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                            MPI_SUCCESS);
                        MPI_Win_lock_all(0, win);
                        const long one = 1;
                        std::vector<long> tickets;
                        for (int i = 0; i < kRounds; ++i) {
                          long old = -1;
                          MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
                          MPI_Accumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win);
                          MPI_Win_flush(0, win);
                          tickets.push_back(old);
                        }
                        MPI_Win_unlock_all(win);
                        MPI_Barrier(MPI_COMM_WORLD);
                        if (rank == 0) {
                          EXPECT_EQ(memory[0], 2 * kRounds);
                          EXPECT_EQ(memory[1], 2 * kRounds);
                        }
                        // Every ticket was handed out once.
                        std::vector<long> all(2 * kRounds);
                        MPI_Allgather(tickets.data(), kRounds, MPI_LONG, all.data(), kRounds,
                                      MPI_LONG, MPI_COMM_WORLD);
                        std::vector<char> seen(2 * kRounds, 0);
                        for (long t : all) {
                          ASSERT_GE(t, 0);
                          ASSERT_LT(t, 2 * kRounds);
                          EXPECT_EQ(seen[static_cast<std::size_t>(t)]++, 0) << t;
                        }
                        ASSERT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
                        std::free(memory);
                      }),
            0);
}

}  // namespace
