// Collective writes through collective buffers (mpi/io/collective_buffer.h) with windows large
// enough for the writer's pwrite calls to leave the caller's core in the old design: the bytes
// of pieces of odd sizes that interleave rank by rank, with a hole after each, land where the
// views put them and the holes keep the file's earlier bytes, on one core and on two; and where
// another core of the writer's node fills, the writer makes its pwrite calls on its own core
// (no spare kernel thread), which a lone core cannot do. A rank may reuse its buffer as soon as
// its call returns, also where the writer wrote from it directly.
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
            MPI_Info info;
            MPI_Info_create(&info);
            // 256 KiB windows: at kDirectWriteBytes, so each used to be handed to a spare thread.
            MPI_Info_set(info, "cb_buffer_size", "262144");
            MPI_Info_set(info, "striping_unit", "4096");
            MPI_File fh = MPI_FILE_NULL;
            ASSERT_EQ(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                                    info, &fh),
                      MPI_SUCCESS);
            MPI_Info_free(&info);
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

// Windows of large pieces go to the file straight from the ranks' memory: each of 8 ranks writes
// 1 KiB blocks that interleave rank by rank, from every other KiB of its buffer (a strided
// memory type), and overwrites its buffer as soon as MPI_File_write_all returns. The file must
// hold what the buffers held during the call: no rank returns while the writer may still read
// its memory.
TEST(FileIoBuffers, BufferReusedRightAfterADirectWrite) {
  constexpr int kWriters = 8, kPiece = 1024, kPieces = 640;
  constexpr int kBytes = kWriters * kPiece * kPieces;  // 5 MiB: five windows of 1 MiB
  TestFile path("reused");
  EXPECT_EQ(
      run_ranks(kWriters, 2,
                [&](int rank) {
                  MPI_Info info;
                  MPI_Info_create(&info);
                  MPI_Info_set(info, "cb_buffer_size", "1048576");
                  MPI_File fh = MPI_FILE_NULL;
                  ASSERT_EQ(MPI_File_open(MPI_COMM_WORLD, path.c_str(),
                                          MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                            MPI_SUCCESS);
                  MPI_Info_free(&info);
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

}  // namespace
