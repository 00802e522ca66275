// Collective writes through collective buffers (mpi/io/collective_buffer.h) with windows large
// enough for the writer's pwrite calls to leave the caller's core in the old design: the bytes
// of pieces of odd sizes that interleave rank by rank, with a hole after each, land where the
// views put them and the holes keep the file's earlier bytes, on one core and on two; and where
// another core of the writer's node fills, the writer makes its pwrite calls on its own core
// (no spare kernel thread), which a lone core cannot do. A rank may reuse its buffer as soon as
// its call returns, also where the writer wrote from it directly (on one core). Ranks that make
// their pieces window by window (an empty one, views with holes, a range that starts late) land
// byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "test_file.h"
#include "weft/io.h"

namespace {

using weft::testing::open_with_hints;
using weft::testing::run_ranks;

// Every test's files under /tmp/weft_file_io_buffer_<pid>_<name>.
class TestFile : public weft::testing::TestFile {
 public:
  explicit TestFile(const char* name) : weft::testing::TestFile("weft_file_io_buffer_", name) {}
};

constexpr int kRanks = 4;
constexpr int kBlocks = 300;  // per rank
constexpr int kBlock = 999;   // bytes a rank writes per tile, odd on purpose
constexpr int kSlot = 1000;   // each rank's slot in a tile: its block and a hole byte
constexpr int kTile = kRanks * kSlot;
constexpr int kFileBytes = kBlocks * kTile;  // 1.2 MB: five windows of 256 KiB
constexpr unsigned char kEarlier = 0xEE;

unsigned char byte_of(int rank, int i) {
  return static_cast<unsigned char>((rank * 7 + i * 13) % 251);
}

std::uint64_t spare_calls() {
  return weft::io::stats().spare_calls;
}

// Rank r writes bytes [r * kSlot, r * kSlot + kBlock) of every tile; the last byte of each slot
// is a hole.
void write_interleaved_with_holes(const TestFile& path, int vps) {
  EXPECT_EQ(
      run_ranks(
          kRanks, vps,
          [&](int rank) {
            // 256 KiB windows: at kDirectWriteBytes, so each used to be handed to a spare thread.
            MPI_File fh = open_with_hints(
                path.c_str(), {{"cb_buffer_size", "262144"}, {"striping_unit", "4096"}});
            ASSERT_NE(fh, MPI_FILE_NULL);
            if (rank == 0) {
              const std::vector<unsigned char> earlier(kFileBytes, kEarlier);
              ASSERT_EQ(
                  MPI_File_write_at(fh, 0, earlier.data(), kFileBytes, MPI_BYTE, MPI_STATUS_IGNORE),
                  MPI_SUCCESS);
            }
            MPI_Datatype block, tile;
            MPI_Type_contiguous(kBlock, MPI_BYTE, &block);
            MPI_Type_create_resized(block, 0, kTile, &tile);
            MPI_Type_commit(&tile);
            MPI_File_set_view(fh, rank * kSlot, MPI_BYTE, tile, "native", MPI_INFO_NULL);
            std::vector<unsigned char> mine(kBlocks * kBlock);
            for (int i = 0; i < kBlocks * kBlock; ++i) mine[i] = byte_of(rank, i);
            MPI_Barrier(MPI_COMM_WORLD);
            const std::uint64_t before = spare_calls();
            MPI_Status status;
            EXPECT_EQ(MPI_File_write_all(fh, mine.data(), kBlocks * kBlock, MPI_BYTE, &status),
                      MPI_SUCCESS);
            int count = -1;
            MPI_Get_count(&status, MPI_BYTE, &count);
            EXPECT_EQ(count, kBlocks * kBlock);
            MPI_Barrier(MPI_COMM_WORLD);
            const std::uint64_t handed = spare_calls() - before;
            // In one process (spread, the transport may use spare threads too, and a domain
            // may hold no full window): with a second core filling, the writer makes its pwrite
            // calls on its own core; alone on its core, through spare threads, one a window.
            if (weft::testing::test_processes() == 1 && vps > 1) {
              EXPECT_EQ(handed, 0u) << "the writer handed its pwrite calls to spare threads";
            } else if (weft::testing::test_processes() == 1) {
              EXPECT_GE(handed, 4u) << "the writer blocked its only core in pwrite";
            }
            MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
            std::vector<unsigned char> all(kFileBytes, 0);
            MPI_File_read_at_all(fh, 0, all.data(), kFileBytes, MPI_BYTE, MPI_STATUS_IGNORE);
            for (int at = 0; at < kFileBytes; ++at) {
              const int t = at / kTile, r = at % kTile / kSlot, k = at % kSlot;
              const unsigned char expected = k < kBlock ? byte_of(r, t * kBlock + k) : kEarlier;
              ASSERT_EQ(all[at], expected) << "at byte " << at;
            }
            MPI_Type_free(&block);
            MPI_Type_free(&tile);
            MPI_File_close(&fh);
          }),
      0);
}

TEST(FileIoBuffers, WriterOnItsOwnCoreWhileAnotherFills) {
  TestFile path("two_cores");
  write_interleaved_with_holes(path, 2);
}

TEST(FileIoBuffers, WriterHandsOffWhenItsCoreIsTheOnlyOne) {
  TestFile path("one_core");
  write_interleaved_with_holes(path, 1);
}

// Windows of large pieces go to the file straight from the ranks' memory where the writer is alone
// (one core; with two, the other core fills them instead): each of 8 ranks writes
// 1 KiB blocks that interleave rank by rank, from every other KiB of its buffer (a strided
// memory type), and overwrites its buffer as soon as MPI_File_write_all returns. The file must
// hold what the buffers held during the call: no rank returns while the writer may still read
// its memory.
TEST(FileIoBuffers, BufferReusedRightAfterADirectWrite) {
  constexpr int kWriters = 8, kPiece = 1024, kPieces = 640;
  constexpr int kBytes = kWriters * kPiece * kPieces;  // 5 MiB: five windows of 1 MiB
  TestFile path("reused");
  EXPECT_EQ(
      run_ranks(kWriters, 1,
                [&](int rank) {
                  MPI_File fh = open_with_hints(path.c_str(), {{"cb_buffer_size", "1048576"}});
                  ASSERT_NE(fh, MPI_FILE_NULL);
                  MPI_Datatype block, tile, strided;
                  MPI_Type_contiguous(kPiece, MPI_BYTE, &block);
                  MPI_Type_create_resized(block, 0, kWriters * kPiece, &tile);
                  MPI_Type_commit(&tile);
                  MPI_Type_vector(kPieces, kPiece, 2 * kPiece, MPI_BYTE, &strided);
                  MPI_Type_commit(&strided);
                  MPI_File_set_view(fh, rank * kPiece, MPI_BYTE, tile, "native", MPI_INFO_NULL);
                  std::vector<unsigned char> mine(2 * kPiece * kPieces);
                  for (int i = 0; i < static_cast<int>(mine.size()); ++i)
                    mine[i] = byte_of(rank, i);
                  EXPECT_EQ(MPI_File_write_all(fh, mine.data(), 1, strided, MPI_STATUS_IGNORE),
                            MPI_SUCCESS);
                  std::fill(mine.begin(), mine.end(), 0);
                  MPI_Barrier(MPI_COMM_WORLD);
                  MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
                  std::vector<unsigned char> all(kBytes, 0);
                  MPI_File_read_at_all(fh, 0, all.data(), kBytes, MPI_BYTE, MPI_STATUS_IGNORE);
                  for (int at = 0; at < kBytes; ++at) {
                    const int i = at / (kWriters * kPiece), r = at / kPiece % kWriters,
                              k = at % kPiece;
                    ASSERT_EQ(all[at], byte_of(r, 2 * kPiece * i + k)) << "at byte " << at;
                  }
                  MPI_Type_free(&block);
                  MPI_Type_free(&tile);
                  MPI_Type_free(&strided);
                  MPI_File_close(&fh);
                }),
      0);
}

// Ranks that make their pieces window by window (ranges first) through many small windows: an
// empty rank, a view with holes whose first block lies past the tile's start, a strided memory
// type whose pieces start in the middle of its blocks at the windows' edges, and a rank whose
// range starts half-way through the file (no piece in the first windows). Every byte lands where
// the views put it; the holes keep the file's earlier bytes.
TEST(FileIoBuffers, RangesFirstWithEmptyRanksHolesAndLateRanges) {
  constexpr int kTile = 3000, kTiles = 100, kBytes = kTile * kTiles;
  constexpr int kLateTiles = 50, kLateDisp = kBytes / 2;  // rank 3's half of the file
  constexpr int kRun = 100, kStride = 150;                // rank 2's memory: 100 of every 150
  TestFile path("ranges_first");
  EXPECT_EQ(
      run_ranks(4, 2,
                [&](int rank) {
                  MPI_File fh = open_with_hints(
                      path.c_str(), {{"cb_buffer_size", "8192"}, {"striping_unit", "512"}});
                  ASSERT_NE(fh, MPI_FILE_NULL);
                  if (rank == 0) {
                    const std::vector<unsigned char> earlier(kBytes, kEarlier);
                    ASSERT_EQ(MPI_File_write_at(fh, 0, earlier.data(), kBytes, MPI_BYTE,
                                                MPI_STATUS_IGNORE),
                              MPI_SUCCESS);
                  }
                  MPI_Barrier(MPI_COMM_WORLD);
                  // Rank 1: [10, 110) and [300, 550) of each tile; rank 2: [1000, 1700); rank 3:
                  // [2000, 2999) of the tiles of the second half; rank 0 nothing.
                  const int lengths[3][2] = {{100, 250}, {700, 0}, {999, 0}};
                  const MPI_Aint displacements[3][2] = {{10, 300}, {1000, 0}, {2000, 0}};
                  MPI_Datatype blocks = MPI_BYTE, tile = MPI_BYTE, memory = MPI_BYTE;
                  int count = 0;
                  std::vector<unsigned char> mine;
                  if (rank == 0) {
                    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
                  } else {
                    const int k = rank - 1;
                    MPI_Type_create_hindexed(lengths[k][1] > 0 ? 2 : 1, lengths[k],
                                             displacements[k], MPI_BYTE, &blocks);
                    MPI_Type_create_resized(blocks, 0, kTile, &tile);
                    MPI_Type_commit(&tile);
                    MPI_File_set_view(fh, rank == 3 ? kLateDisp : 0, MPI_BYTE, tile, "native",
                                      MPI_INFO_NULL);
                    const int data =
                        (lengths[k][0] + lengths[k][1]) * (rank == 3 ? kLateTiles : kTiles);
                    if (rank == 2) {
                      MPI_Type_vector(data / kRun, kRun, kStride, MPI_BYTE, &memory);
                      MPI_Type_commit(&memory);
                      mine.resize(static_cast<std::size_t>(data / kRun * kStride));
                      count = 1;
                    } else {
                      mine.resize(static_cast<std::size_t>(data));
                      count = data;
                    }
                    for (std::size_t i = 0; i < mine.size(); ++i) {
                      mine[i] = byte_of(rank, static_cast<int>(i));
                    }
                  }
                  EXPECT_EQ(MPI_File_write_all(fh, mine.data(), count, memory, MPI_STATUS_IGNORE),
                            MPI_SUCCESS);
                  MPI_Barrier(MPI_COMM_WORLD);
                  MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
                  std::vector<unsigned char> all(kBytes, 0);
                  MPI_File_read_at_all(fh, 0, all.data(), kBytes, MPI_BYTE, MPI_STATUS_IGNORE);
                  for (int at = 0; at < kBytes; ++at) {
                    const int t = at / kTile, o = at % kTile;
                    unsigned char expected = kEarlier;
                    if (o >= 10 && o < 110) {
                      expected = byte_of(1, t * 350 + o - 10);
                    } else if (o >= 300 && o < 550) {
                      expected = byte_of(1, t * 350 + 100 + o - 300);
                    } else if (o >= 1000 && o < 1700) {
                      const int s = t * 700 + o - 1000;  // rank 2's data stream
                      expected = byte_of(2, s / kRun * kStride + s % kRun);
                    } else if (at >= kLateDisp && o >= 2000 && o < 2999) {
                      expected = byte_of(3, (t - kLateDisp / kTile) * 999 + o - 2000);
                    }
                    ASSERT_EQ(all[at], expected) << "at byte " << at;
                  }
                  if (rank > 0) {
                    MPI_Type_free(&blocks);
                    MPI_Type_free(&tile);
                  }
                  if (rank == 2) MPI_Type_free(&memory);
                  MPI_File_close(&fh);
                }),
      0);
}

}  // namespace
