// MPI-IO (MPI-4.1 14): every access family (explicit offsets, individual and shared file
// pointers; blocking, nonblocking, split collective), views of derived datatypes (vector,
// subarray, darray), collective writes whose pieces interleave, read back and compared byte for
// byte, and the errors a program gets for bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "test_file.h"

namespace {

using weft::testing::run_ranks;

// Every test's files under /tmp/weft_file_io_<pid>_<name>.
class TestFile : public weft::testing::TestFile {
 public:
  explicit TestFile(const char* name) : weft::testing::TestFile("weft_file_io_", name) {}
};

MPI_File open_file(const TestFile& path, int amode) {
  MPI_File fh = MPI_FILE_NULL;
  EXPECT_EQ(MPI_File_open(MPI_COMM_WORLD, path.c_str(), amode, MPI_INFO_NULL, &fh), MPI_SUCCESS);
  return fh;
}

int count_of(const MPI_Status& status, MPI_Datatype type) {
  int count = -1;
  MPI_Get_count(&status, type, &count);
  return count;
}

TEST(FileIo, ExplicitOffsetsIndividualPointersAndTheirPositions) {
  TestFile path("explicit");
  EXPECT_EQ(run_ranks(4, 2,
                      [&](int rank) {
                        MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
                        int values[10];
                        for (int i = 0; i < 10; ++i) values[i] = rank * 100 + i;
                        MPI_Status status;
                        EXPECT_EQ(MPI_File_write_at(fh, rank * 40, values, 10, MPI_INT, &status),
                                  MPI_SUCCESS);
                        EXPECT_EQ(count_of(status, MPI_INT), 10);
                        MPI_Barrier(MPI_COMM_WORLD);
                        MPI_Offset size = 0;
                        EXPECT_EQ(MPI_File_get_size(fh, &size), MPI_SUCCESS);
                        EXPECT_EQ(size, 160);
                        // The next rank's values through the individual pointer.
                        const int next = (rank + 1) % 4;
                        EXPECT_EQ(MPI_File_seek(fh, next * 40 + 8, MPI_SEEK_SET), MPI_SUCCESS);
                        int read[8] = {};
                        EXPECT_EQ(MPI_File_read(fh, read, 8, MPI_INT, &status), MPI_SUCCESS);
                        EXPECT_EQ(count_of(status, MPI_INT), 8);
                        for (int i = 0; i < 8; ++i) EXPECT_EQ(read[i], next * 100 + i + 2);
                        MPI_Offset position = 0;
                        MPI_File_get_position(fh, &position);
                        EXPECT_EQ(position, next * 40 + 8 + 32);
                        // Reading past the end is no error: it reads what is there.
                        EXPECT_EQ(MPI_File_read_at(fh, 152, read, 8, MPI_INT, &status),
                                  MPI_SUCCESS);
                        EXPECT_EQ(count_of(status, MPI_INT), 2);
                        int amode = 0;
                        MPI_File_get_amode(fh, &amode);
                        EXPECT_EQ(amode, MPI_MODE_CREATE | MPI_MODE_RDWR);
                        EXPECT_EQ(MPI_File_close(&fh), MPI_SUCCESS);
                        EXPECT_EQ(fh, MPI_FILE_NULL);
                      }),
            0);
}

// 4 ranks on a 2 x 2 grid of blocks of a 6 x 8 array of ints, each writing its block through a
// subarray view in one collective write; the file must hold the whole array in row order.
TEST(FileIo, SubarrayViewsCollectiveWriteReadsBackTheArray) {
  TestFile path("subarray");
  EXPECT_EQ(
      run_ranks(
          4, 2,
          [&](int rank) {
            const int sizes[2] = {6, 8}, subsizes[2] = {3, 4};
            const int starts[2] = {rank / 2 * 3, rank % 2 * 4};
            MPI_Datatype block;
            MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &block);
            MPI_Type_commit(&block);
            MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
            EXPECT_EQ(MPI_File_set_view(fh, 0, MPI_INT, block, "native", MPI_INFO_NULL),
                      MPI_SUCCESS);
            MPI_Type_free(&block);  // the view keeps it
            std::vector<int> mine(12);
            for (int i = 0; i < 12; ++i) {
              mine[i] = (starts[0] + i / 4) * 8 + starts[1] + i % 4;
            }
            MPI_Status status;
            EXPECT_EQ(MPI_File_write_all(fh, mine.data(), 12, MPI_INT, &status), MPI_SUCCESS);
            EXPECT_EQ(count_of(status, MPI_INT), 12);
            // Read the whole array back through a plain view.
            EXPECT_EQ(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
                      MPI_SUCCESS);
            std::vector<int> all(48, -1);
            EXPECT_EQ(MPI_File_read_at_all(fh, 0, all.data(), 48, MPI_INT, &status), MPI_SUCCESS);
            for (int i = 0; i < 48; ++i) EXPECT_EQ(all[i], i) << "at " << i;
            // And this rank's block through its view again, collectively.
            MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &block);
            MPI_Type_commit(&block);
            MPI_File_set_view(fh, 0, MPI_INT, block, "native", MPI_INFO_NULL);
            std::vector<int> back(12, -1);
            EXPECT_EQ(MPI_File_read_all(fh, back.data(), 12, MPI_INT, &status), MPI_SUCCESS);
            EXPECT_EQ(back, mine);
            MPI_Type_free(&block);
            MPI_File_close(&fh);
          }),
      0);
}

// A block-cyclic darray over 3 ranks with a noncontiguous memory type: every element must land
// where the distribution puts it.
TEST(FileIo, DarrayViewWithNoncontiguousMemory) {
  TestFile path("darray");
  EXPECT_EQ(
      run_ranks(3, 2,
                [&](int rank) {
                  const int gsizes[1] = {30}, distribs[1] = {MPI_DISTRIBUTE_CYCLIC};
                  const int dargs[1] = {2}, psizes[1] = {3};
                  MPI_Datatype darray;
                  MPI_Type_create_darray(3, rank, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                         MPI_INT, &darray);
                  MPI_Type_commit(&darray);
                  MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
                  MPI_File_set_view(fh, 0, MPI_INT, darray, "native", MPI_INFO_NULL);
                  // Each rank holds 10 elements, every other int of its buffer.
                  std::vector<int> buffer(20, -7);
                  int k = 0;
                  for (int block = 0; block < 5; ++block) {
                    for (int j = 0; j < 2; ++j) buffer[2 * k++] = (block * 3 + rank) * 2 + j;
                  }
                  MPI_Datatype strided;
                  MPI_Type_vector(10, 1, 2, MPI_INT, &strided);
                  MPI_Type_commit(&strided);
                  EXPECT_EQ(MPI_File_write_all(fh, buffer.data(), 1, strided, MPI_STATUS_IGNORE),
                            MPI_SUCCESS);
                  MPI_File_sync(fh);
                  MPI_Barrier(MPI_COMM_WORLD);
                  MPI_File_sync(fh);
                  std::vector<int> all(30, -1);
                  MPI_Status status;
                  EXPECT_EQ(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
                            MPI_SUCCESS);
                  EXPECT_EQ(MPI_File_read_at(fh, 0, all.data(), 30, MPI_INT, &status), MPI_SUCCESS);
                  for (int i = 0; i < 30; ++i) EXPECT_EQ(all[i], i) << "at " << i;
                  MPI_Type_free(&strided);
                  MPI_Type_free(&darray);
                  MPI_File_close(&fh);
                }),
      0);
}

// Ranks interleave int by int (a vector filetype shifted by the displacement): a collective
// write whose pieces interleave, then the same with collective buffering disabled.
TEST(FileIo, InterleavedCollectiveWritesWithAndWithoutBuffering) {
  for (const char* buffering : {"enable", "disable"}) {
    TestFile path(buffering);
    EXPECT_EQ(
        run_ranks(4, 2,
                  [&](int rank) {
                    MPI_Info info;
                    MPI_Info_create(&info);
                    MPI_Info_set(info, "romio_cb_write", buffering);
                    MPI_File fh = MPI_FILE_NULL;
                    ASSERT_EQ(MPI_File_open(MPI_COMM_WORLD, path.c_str(),
                                            MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                              MPI_SUCCESS);
                    MPI_Info_free(&info);
                    MPI_Datatype every4, tile;
                    MPI_Type_vector(1, 1, 4, MPI_INT, &every4);
                    MPI_Type_create_resized(every4, 0, 16, &tile);
                    MPI_Type_commit(&tile);
                    MPI_File_set_view(fh, rank * 4, MPI_INT, tile, "native", MPI_INFO_NULL);
                    std::vector<int> mine(100);
                    for (int i = 0; i < 100; ++i) mine[i] = i * 4 + rank;
                    EXPECT_EQ(MPI_File_write_all(fh, mine.data(), 100, MPI_INT, MPI_STATUS_IGNORE),
                              MPI_SUCCESS);
                    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
                    std::vector<int> all(400, -1);
                    MPI_File_read_at_all(fh, 0, all.data(), 400, MPI_INT, MPI_STATUS_IGNORE);
                    for (int i = 0; i < 400; ++i) EXPECT_EQ(all[i], i) << "at " << i;
                    // A collective read across the end of the file reads what is there and
                    // leaves the rest of the buffer alone.
                    std::vector<int> tail(20, -5);
                    MPI_Status status;
                    EXPECT_EQ(
                        MPI_File_read_at_all(fh, 390 + rank, tail.data(), 20, MPI_INT, &status),
                        MPI_SUCCESS);
                    EXPECT_EQ(count_of(status, MPI_INT), 10 - rank);
                    for (int i = 0; i < 10 - rank; ++i) EXPECT_EQ(tail[i], 390 + rank + i);
                    for (int i = 10 - rank; i < 20; ++i) EXPECT_EQ(tail[i], -5);
                    MPI_Info used;
                    MPI_File_get_info(fh, &used);
                    char value[MPI_MAX_INFO_VAL];
                    int flag = 0;
                    MPI_Info_get(used, "romio_cb_write", MPI_MAX_INFO_VAL, value, &flag);
                    EXPECT_TRUE(flag);
                    EXPECT_STREQ(value, buffering);
                    MPI_Info_free(&used);
                    MPI_Type_free(&every4);
                    MPI_Type_free(&tile);
                    MPI_File_close(&fh);
                  }),
        0);
  }
}

// Collective buffers of 4608 bytes (cb_buffer_size 5000 rounded down to the 512-byte striping
// unit), so that a write crosses many windows, and between processes one aggregator (cb_nodes): a
// view with a hole after every rank's blocks (the holes keep the file's earlier bytes), a count
// that ends inside a block, and requests that overlap (inside a process the highest rank's bytes
// are written; across processes one of the overlapping ranks' bytes).
TEST(FileIo, CollectiveBuffersKeepHolesOverlapsAndOddSizes) {
  constexpr int kRanks = 4, kCount = 1001, kTile = 16, kFill = -7;
  constexpr int kTiles = (kCount + 2) / 3, kInts = kTiles * kTile + 64;
  TestFile path("buffers");
  EXPECT_EQ(
      run_ranks(
          kRanks, 2,
          [&](int rank) {
            MPI_Info info;
            MPI_Info_create(&info);
            MPI_Info_set(info, "cb_buffer_size", "5000");
            MPI_Info_set(info, "striping_unit", "512");
            // Between processes, the first process's head aggregates every domain.
            MPI_Info_set(info, "cb_nodes", "1");
            MPI_File fh = MPI_FILE_NULL;
            ASSERT_EQ(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                                    info, &fh),
                      MPI_SUCCESS);
            MPI_Info_free(&info);
            if (rank == 0) {
              const std::vector<int> fill(kInts, kFill);
              MPI_File_write_at(fh, 0, fill.data(), kInts, MPI_INT, MPI_STATUS_IGNORE);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            // Rank r writes ints 4r, 4r+1, 4r+2 of every tile of 16; 4r+3 is a hole.
            MPI_Datatype three, tile;
            MPI_Type_contiguous(3, MPI_INT, &three);
            MPI_Type_create_resized(three, 0, kTile * sizeof(int), &tile);
            MPI_Type_commit(&tile);
            MPI_File_set_view(fh, rank * 4 * sizeof(int), MPI_INT, tile, "native", MPI_INFO_NULL);
            std::vector<int> mine(kCount);
            for (int i = 0; i < kCount; ++i) mine[i] = rank * 100000 + i;
            MPI_Status status;
            EXPECT_EQ(MPI_File_write_all(fh, mine.data(), kCount, MPI_INT, &status), MPI_SUCCESS);
            EXPECT_EQ(count_of(status, MPI_INT), kCount);
            MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
            std::vector<int> all(kInts, 0);
            MPI_File_read_at_all(fh, 0, all.data(), kInts, MPI_INT, MPI_STATUS_IGNORE);
            for (int i = 0; i < kInts; ++i) {
              const int t = i / kTile, r = i % kTile / 4, k = i % 4, n = t * 3 + k;
              const int expected = k < 3 && n < kCount ? r * 100000 + n : kFill;
              ASSERT_EQ(all[i], expected) << "at int " << i;
            }
            // Overlapping requests: rank r writes 4000 ints from int 3000 r, so each
            // overlaps the next rank's by 1000.
            std::vector<int> chunk(4000);
            for (int i = 0; i < 4000; ++i) chunk[i] = rank * 100000 + i;
            EXPECT_EQ(MPI_File_write_at_all(fh, rank * 3000, chunk.data(), 4000, MPI_INT,
                                            MPI_STATUS_IGNORE),
                      MPI_SUCCESS);
            std::vector<int> back(3000 * (kRanks - 1) + 4000, 0);
            MPI_File_read_at_all(fh, 0, back.data(), static_cast<int>(back.size()), MPI_INT,
                                 MPI_STATUS_IGNORE);
            for (int i = 0; i < static_cast<int>(back.size()); ++i) {
              const int highest = std::min(i / 3000, kRanks - 1);
              const int lower = i % 3000 < 1000 && highest > 0 ? highest - 1 : highest;
              const int one_process = highest * 100000 + i - highest * 3000;
              const int other = lower * 100000 + i - lower * 3000;
              if (weft::testing::test_processes() == 1) {
                ASSERT_EQ(back[i], one_process) << "at int " << i;
              } else {
                ASSERT_TRUE(back[i] == one_process || back[i] == other) << "at int " << i;
              }
            }
            MPI_Type_free(&three);
            MPI_Type_free(&tile);
            MPI_File_close(&fh);
          }),
      0);
}

// Two NUMA nodes in one process: one aggregator per node, each moving its file domain from the
// buffers of every rank. The pieces interleave rank by rank, so both domains hold every rank's.
TEST(FileIo, OneAggregatorPerNumaNode) {
  TestFile path("numa");
  EXPECT_EQ(run_ranks(4, 4,
                      [&](int rank) {
                        MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
                        MPI_Datatype every4, tile;
                        MPI_Type_vector(1, 2, 8, MPI_INT, &every4);
                        MPI_Type_create_resized(every4, 0, 32, &tile);
                        MPI_Type_commit(&tile);
                        MPI_File_set_view(fh, rank * 8, MPI_INT, tile, "native", MPI_INFO_NULL);
                        std::vector<int> mine(1000);
                        for (int i = 0; i < 1000; ++i) mine[i] = (i / 2) * 8 + rank * 2 + i % 2;
                        EXPECT_EQ(
                            MPI_File_write_all(fh, mine.data(), 1000, MPI_INT, MPI_STATUS_IGNORE),
                            MPI_SUCCESS);
                        std::vector<int> back(1000, -1);
                        MPI_Status status;
                        EXPECT_EQ(MPI_File_read_at_all(fh, 0, back.data(), 1000, MPI_INT, &status),
                                  MPI_SUCCESS);
                        EXPECT_EQ(count_of(status, MPI_INT), 1000);
                        EXPECT_EQ(back, mine);
                        MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
                        std::vector<int> all(4000, -1);
                        MPI_File_read_at_all(fh, 0, all.data(), 4000, MPI_INT, MPI_STATUS_IGNORE);
                        for (int i = 0; i < 4000; ++i) ASSERT_EQ(all[i], i) << "at " << i;
                        MPI_Type_free(&every4);
                        MPI_Type_free(&tile);
                        MPI_File_close(&fh);
                      },
                      {{"topology", "synthetic:pack:2 [numa] core:2 pu:1"}}),
            0);
}

// A job script's hints file (ROMIO_HINTS, as ROMIO reads it): the first line of a key counts,
// and the program's own info has the last word.
TEST(FileIo, RomioHintsFileThenTheProgramsInfo) {
  TestFile path("hints");
  TestFile hints("hints_file");
  {
    std::FILE* out = std::fopen(hints.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs(
        "romio_cb_read enable\n# a comment\nind_rd_buffer_size 49\nind_rd_buffer_size 60\n"
        "striping_unit 65536\n",
        out);
    std::fclose(out);
  }
  ::setenv("ROMIO_HINTS", hints.c_str(), 1);
  EXPECT_EQ(run_ranks(2, 2,
                      [&](int) {
                        MPI_Info mine;
                        MPI_Info_create(&mine);
                        MPI_Info_set(mine, "romio_cb_read", "disable");
                        MPI_File fh = MPI_FILE_NULL;
                        ASSERT_EQ(MPI_File_open(MPI_COMM_WORLD, path.c_str(),
                                                MPI_MODE_CREATE | MPI_MODE_RDWR, mine, &fh),
                                  MPI_SUCCESS);
                        MPI_Info_free(&mine);
                        MPI_Info used;
                        MPI_File_get_info(fh, &used);
                        char value[MPI_MAX_INFO_VAL];
                        int flag = 0;
                        MPI_Info_get(used, "ind_rd_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
                        EXPECT_TRUE(flag);
                        EXPECT_STREQ(value, "49");
                        MPI_Info_get(used, "striping_unit", MPI_MAX_INFO_VAL, value, &flag);
                        EXPECT_STREQ(value, "65536");
                        MPI_Info_get(used, "romio_cb_read", MPI_MAX_INFO_VAL, value, &flag);
                        EXPECT_STREQ(value, "disable");
                        MPI_Info_free(&used);
                        MPI_File_close(&fh);
                      }),
            0);
  ::unsetenv("ROMIO_HINTS");
}

// A rank computes while its nonblocking write progresses, then waits; the nonblocking
// collective and split collective forms read it back.
TEST(FileIo, NonblockingAndSplitCollectiveAccess) {
  TestFile path("nonblocking");
  EXPECT_EQ(run_ranks(4, 2,
                      [&](int rank) {
                        MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
                        const int n = 1 << 16;
                        std::vector<int> data(n);
                        for (int i = 0; i < n; ++i) data[i] = rank * n + i;
                        MPI_Request request;
                        ASSERT_EQ(MPI_File_iwrite_at(fh, MPI_Offset{rank} * n * 4, data.data(), n,
                                                     MPI_INT, &request),
                                  MPI_SUCCESS);
                        volatile double sum = 0;
                        int done = 0;
                        while (!done) {
                          for (int i = 0; i < 1000; ++i) sum = sum + i;
                          MPI_Test(&request, &done, MPI_STATUS_IGNORE);
                        }
                        MPI_Barrier(MPI_COMM_WORLD);
                        const int other = (rank + 1) % 4;
                        std::vector<int> back(n, -1);
                        MPI_File_seek(fh, MPI_Offset{other} * n * 4, MPI_SEEK_SET);
                        ASSERT_EQ(MPI_File_iread_all(fh, back.data(), n, MPI_INT, &request),
                                  MPI_SUCCESS);
                        MPI_Status status;
                        MPI_Wait(&request, &status);
                        EXPECT_EQ(count_of(status, MPI_INT), n);
                        for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], other * n + i);
                        std::fill(back.begin(), back.end(), -1);
                        ASSERT_EQ(MPI_File_read_at_all_begin(fh, MPI_Offset{rank} * n * 4,
                                                             back.data(), n, MPI_INT),
                                  MPI_SUCCESS);
                        EXPECT_EQ(MPI_File_read_at_all_end(fh, back.data(), &status), MPI_SUCCESS);
                        EXPECT_EQ(back, data);
                        MPI_File_close(&fh);
                      }),
            0);
}

// Ranks write through the shared pointer at once: every record lands once, none overwritten;
// then write_ordered places them in rank order.
TEST(FileIo, SharedPointerWithConcurrentRanksAndOrderedWrites) {
  TestFile path("shared");
  EXPECT_EQ(
      run_ranks(4, 2,
                [&](int rank) {
                  MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
                  for (int i = 0; i < 25; ++i) {
                    const int record[2] = {rank, i};
                    EXPECT_EQ(MPI_File_write_shared(fh, record, 2, MPI_INT, MPI_STATUS_IGNORE),
                              MPI_SUCCESS);
                  }
                  MPI_Barrier(MPI_COMM_WORLD);
                  MPI_Offset position = 0;
                  MPI_File_get_position_shared(fh, &position);
                  EXPECT_EQ(position, 4 * 25 * 8);
                  std::vector<int> all(200, -1);
                  MPI_File_read_at(fh, 0, all.data(), 200, MPI_INT, MPI_STATUS_IGNORE);
                  std::vector<int> seen(100, 0);
                  for (int r = 0; r < 100; ++r) {
                    ASSERT_GE(all[2 * r], 0);
                    ASSERT_LT(all[2 * r], 4);
                    ++seen[all[2 * r] * 25 + all[2 * r + 1]];
                  }
                  for (int s : seen) EXPECT_EQ(s, 1);
                  MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
                  const int values[4] = {rank, rank, rank, rank};
                  EXPECT_EQ(
                      MPI_File_write_ordered(fh, values, rank + 1, MPI_INT, MPI_STATUS_IGNORE),
                      MPI_SUCCESS);
                  MPI_File_get_position_shared(fh, &position);
                  EXPECT_EQ(position, 4 * 10);
                  MPI_Barrier(MPI_COMM_WORLD);
                  int ordered[10];
                  MPI_File_read_at(fh, 0, ordered, 10, MPI_INT, MPI_STATUS_IGNORE);
                  const int expected[10] = {0, 1, 1, 2, 2, 2, 3, 3, 3, 3};
                  for (int i = 0; i < 10; ++i) EXPECT_EQ(ordered[i], expected[i]);
                  MPI_File_close(&fh);
                }),
      0);
}

TEST(FileIo, External32StoresBigEndian) {
  TestFile path("external32");
  EXPECT_EQ(run_ranks(2, 2,
                      [&](int rank) {
                        MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
                        MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
                        const int value = 0x01020304 + rank;
                        MPI_File_write_at_all(fh, rank, &value, 1, MPI_INT, MPI_STATUS_IGNORE);
                        int back = 0;
                        MPI_File_read_at_all(fh, rank, &back, 1, MPI_INT, MPI_STATUS_IGNORE);
                        EXPECT_EQ(back, value);
                        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
                        unsigned char bytes[4] = {};
                        MPI_File_read_at(fh, rank * 4, bytes, 4, MPI_BYTE, MPI_STATUS_IGNORE);
                        EXPECT_EQ(bytes[0], 1);
                        EXPECT_EQ(bytes[3], 4 + rank);
                        MPI_File_close(&fh);
                      }),
            0);
}

// Filetypes of every constructor: reading the file (ints 0, 1, 2...) through the view must give
// what MPI_Pack takes from memory holding the same ints through the same type, tile after tile;
// writing through the view must put each value where MPI_Unpack puts it.
TEST(FileIo, ViewsOfEveryConstructorMatchPackAndUnpack) {
  TestFile path("constructors");
  EXPECT_EQ(
      run_ranks(
          2, 2,
          [&](int rank) {
            std::vector<MPI_Datatype> types;
            MPI_Datatype t;
            MPI_Type_contiguous(3, MPI_INT, &t);
            types.push_back(t);
            MPI_Type_vector(3, 2, 5, MPI_INT, &t);
            types.push_back(t);
            MPI_Type_create_hvector(2, 3, 28, MPI_INT, &t);
            types.push_back(t);
            const int lengths[3] = {2, 1, 3}, displacements[3] = {1, 4, 9};
            MPI_Type_indexed(3, lengths, displacements, MPI_INT, &t);
            types.push_back(t);
            const MPI_Aint hdisplacements[3] = {0, 12, 40};
            MPI_Type_create_hindexed(3, lengths, hdisplacements, MPI_INT, &t);
            types.push_back(t);
            MPI_Type_create_indexed_block(3, 2, displacements, MPI_INT, &t);
            types.push_back(t);
            MPI_Type_create_hindexed_block(3, 1, hdisplacements, MPI_INT, &t);
            types.push_back(t);
            const MPI_Datatype members[2] = {MPI_INT, MPI_INT};
            const int blocks[2] = {1, 2};
            const MPI_Aint at[2] = {4, 16};
            MPI_Type_create_struct(2, blocks, at, members, &t);
            types.push_back(t);
            MPI_Datatype inner;
            MPI_Type_vector(2, 1, 3, MPI_INT, &inner);
            MPI_Type_create_resized(inner, 0, 32, &t);
            types.push_back(t);
            MPI_Type_free(&inner);
            const int sizes[2] = {4, 6}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
            MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
            types.push_back(t);
            const int gsizes[2] = {4, 6},
                      distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
            const int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {1, 2};
            MPI_Type_create_darray(2, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                   MPI_INT, &t);
            types.push_back(t);
            const int n = 400;
            std::vector<int> ints(n);
            for (int i = 0; i < n; ++i) ints[i] = i;
            for (std::size_t k = 0; k < types.size(); ++k) {
              MPI_Datatype type = types[k];
              MPI_Type_commit(&type);
              int size = 0;
              MPI_Aint lb = 0, extent = 0;
              MPI_Type_size(type, &size);
              MPI_Type_get_extent(type, &lb, &extent);
              const int tiles = 3;
              const int values = tiles * size / 4;
              ASSERT_LE(tiles * extent, n * 4) << "type " << k;
              // What the view selects, by MPI_Pack of the same ints.
              std::vector<int> expected(static_cast<std::size_t>(values));
              int position = 0;
              MPI_Pack(ints.data(), tiles, type, expected.data(), values * 4, &position,
                       MPI_COMM_SELF);
              MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
              if (rank == 0) {
                MPI_File_write_at(fh, 0, ints.data(), n, MPI_INT, MPI_STATUS_IGNORE);
              }
              MPI_Barrier(MPI_COMM_WORLD);
              ASSERT_EQ(MPI_File_set_view(fh, 0, MPI_INT, type, "native", MPI_INFO_NULL),
                        MPI_SUCCESS)
                  << "type " << k;
              std::vector<int> read(static_cast<std::size_t>(values), -1);
              MPI_Status status;
              EXPECT_EQ(MPI_File_read_all(fh, read.data(), values, MPI_INT, &status), MPI_SUCCESS);
              EXPECT_EQ(count_of(status, MPI_INT), values);
              EXPECT_EQ(read, expected) << "type " << k;
              // Writing negated values through the view, collectively: each lands
              // where MPI_Unpack puts it (rank 0 only, so that the ranks' darray
              // parts do not decide the comparison between them).
              std::vector<int> negated(read.size());
              for (std::size_t i = 0; i < read.size(); ++i) negated[i] = -1 - read[i];
              EXPECT_EQ(MPI_File_write_at_all(fh, 0, negated.data(), rank == 0 ? values : 0,
                                              MPI_INT, MPI_STATUS_IGNORE),
                        MPI_SUCCESS);
              MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
              std::vector<int> file(n);
              MPI_File_read_at_all(fh, 0, file.data(), n, MPI_INT, MPI_STATUS_IGNORE);
              if (rank == 0) {
                std::vector<int> want = ints;
                position = 0;
                MPI_Unpack(negated.data(), values * 4, &position, want.data(), tiles, type,
                           MPI_COMM_SELF);
                EXPECT_EQ(file, want) << "type " << k;
              }
              MPI_File_close(&fh);
              MPI_Barrier(MPI_COMM_WORLD);
              if (rank == 0) MPI_File_delete(path.c_str(), MPI_INFO_NULL);
              MPI_Barrier(MPI_COMM_WORLD);
              MPI_Type_free(&type);
            }
          }),
      0);
}

// A representation of the program's: ints stored byte-swapped.
int swap_ints(void* from, int count, void* to) {
  auto* in = static_cast<unsigned char*>(from);
  auto* out = static_cast<unsigned char*>(to);
  for (int i = 0; i < count * 4; i += 4) {
    for (int b = 0; b < 4; ++b) out[i + b] = in[i + 3 - b];
  }
  return MPI_SUCCESS;
}
int read_swapped(void* userbuf, MPI_Datatype, int count, void* filebuf, MPI_Offset, void*) {
  return swap_ints(filebuf, count, userbuf);
}
int write_swapped(void* userbuf, MPI_Datatype, int count, void* filebuf, MPI_Offset, void*) {
  return swap_ints(userbuf, count, filebuf);
}
int swapped_extent(MPI_Datatype, MPI_Aint* extent, void*) {
  *extent = 4;
  return MPI_SUCCESS;
}

TEST(FileIo, RegisteredDatarepConvertsBothWays) {
  TestFile path("datarep");
  EXPECT_EQ(
      run_ranks(
          2, 2,
          [&](int rank) {
            ASSERT_EQ(MPI_Register_datarep("weft-swapped", read_swapped, write_swapped,
                                           swapped_extent, nullptr),
                      MPI_SUCCESS);
            EXPECT_EQ(MPI_Register_datarep("weft-swapped", read_swapped, write_swapped,
                                           swapped_extent, nullptr),
                      MPI_ERR_DUP_DATAREP);
            MPI_File fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
            ASSERT_EQ(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "weft-swapped", MPI_INFO_NULL),
                      MPI_SUCCESS);
            char datarep[MPI_MAX_DATAREP_STRING];
            MPI_Offset disp;
            MPI_Datatype etype, filetype;
            MPI_File_get_view(fh, &disp, &etype, &filetype, datarep);
            EXPECT_STREQ(datarep, "weft-swapped");
            MPI_Aint extent = 0;
            MPI_File_get_type_extent(fh, MPI_INT, &extent);
            EXPECT_EQ(extent, 4);
            const int values[2] = {0x01020304 + rank, 0x0a0b0c0d};
            EXPECT_EQ(MPI_File_write_at_all(fh, 2 * rank, values, 2, MPI_INT, MPI_STATUS_IGNORE),
                      MPI_SUCCESS);
            int back[2] = {};
            EXPECT_EQ(MPI_File_read_at_all(fh, 2 * rank, back, 2, MPI_INT, MPI_STATUS_IGNORE),
                      MPI_SUCCESS);
            EXPECT_EQ(back[0], values[0]);
            EXPECT_EQ(back[1], values[1]);
            MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
            unsigned char bytes[4] = {};
            MPI_File_read_at(fh, 8 * rank, bytes, 4, MPI_BYTE, MPI_STATUS_IGNORE);
            EXPECT_EQ(bytes[0], 1);
            EXPECT_EQ(bytes[3], 4 + rank);
            MPI_File_close(&fh);
          }),
      0);
}

int handled = 0;
void count_error(MPI_File*, int* code, ...) {
  handled = *code;
}

// Bad input gets its class, on the handler of the file (MPI_ERRORS_RETURN by default), and the
// file stays usable.
TEST(FileIo, ErrorsReturnTheirClass) {
  TestFile path("errors");
  TestFile missing("missing");
  EXPECT_EQ(
      run_ranks(
          2, 2,
          [&](int) {
            MPI_File fh = MPI_FILE_NULL;
            int error_class = 0;
            int rc =
                MPI_File_open(MPI_COMM_WORLD, missing.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
            MPI_Error_class(rc, &error_class);
            EXPECT_EQ(error_class, MPI_ERR_NO_SUCH_FILE);
            rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDONLY | MPI_MODE_CREATE,
                               MPI_INFO_NULL, &fh);
            EXPECT_EQ(rc, MPI_ERR_AMODE);
            rc = MPI_File_delete(missing.c_str(), MPI_INFO_NULL);
            EXPECT_EQ(rc, MPI_ERR_NO_SUCH_FILE);
            fh = open_file(path, MPI_MODE_CREATE | MPI_MODE_WRONLY);
            int value = 5;
            EXPECT_EQ(MPI_File_read_at(fh, 0, &value, 1, MPI_INT, MPI_STATUS_IGNORE),
                      MPI_ERR_ACCESS);
            // A filetype that is not a whole number of etypes.
            MPI_Datatype three;
            MPI_Type_contiguous(3, MPI_BYTE, &three);
            MPI_Type_commit(&three);
            EXPECT_EQ(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL),
                      MPI_ERR_TYPE);
            EXPECT_EQ(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL),
                      MPI_ERR_UNSUPPORTED_DATAREP);
            MPI_Type_free(&three);
            EXPECT_EQ(MPI_File_write_at(fh, -1, &value, 1, MPI_INT, MPI_STATUS_IGNORE),
                      MPI_ERR_ARG);
            // The file's own handler is called with the class.
            MPI_Errhandler handler;
            MPI_File_create_errhandler(count_error, &handler);
            MPI_File_set_errhandler(fh, handler);
            handled = 0;
            MPI_File_read(fh, &value, 1, MPI_INT, MPI_STATUS_IGNORE);
            EXPECT_EQ(handled, MPI_ERR_ACCESS);
            MPI_Errhandler got;
            MPI_File_get_errhandler(fh, &got);
            EXPECT_EQ(got, handler);
            MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
            MPI_Errhandler_free(&handler);
            // Nothing was lost: the file still works.
            EXPECT_EQ(MPI_File_write_at(fh, 0, &value, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
            MPI_File_close(&fh);
            EXPECT_EQ(MPI_File_get_size(fh, nullptr), MPI_ERR_FILE);
          }),
      0);
}

// A full disk: /dev/full takes no byte (ENOSPC), which the program gets as MPI_ERR_NO_SPACE,
// from a collective write through a collective buffer (the ranks' ints overlap) and from one
// written straight from the ranks' memory (blocks of 1 KiB side by side).
TEST(FileIo, FullDiskIsNoSpace) {
  EXPECT_EQ(run_ranks(2, 2,
                      [&](int rank) {
                        MPI_File fh = MPI_FILE_NULL;
                        ASSERT_EQ(MPI_File_open(MPI_COMM_WORLD, "/dev/full", MPI_MODE_WRONLY,
                                                MPI_INFO_NULL, &fh),
                                  MPI_SUCCESS);
                        const int value = 1;
                        int error_class = 0;
                        MPI_Error_class(MPI_File_write(fh, &value, 1, MPI_INT, MPI_STATUS_IGNORE),
                                        &error_class);
                        EXPECT_EQ(error_class, MPI_ERR_NO_SPACE);
                        MPI_Error_class(
                            MPI_File_write_all(fh, &value, 1, MPI_INT, MPI_STATUS_IGNORE),
                            &error_class);
                        EXPECT_EQ(error_class, MPI_ERR_NO_SPACE);
                        const std::vector<char> block(1024, 'x');
                        MPI_Error_class(MPI_File_write_at_all(fh, rank * 1024, block.data(), 1024,
                                                              MPI_BYTE, MPI_STATUS_IGNORE),
                                        &error_class);
                        EXPECT_EQ(error_class, MPI_ERR_NO_SPACE);
                        // A nonblocking write returns the class from its wait (the default
                        // handler of files returns; MPI_COMM_WORLD's would end the job).
                        MPI_Request request;
                        ASSERT_EQ(MPI_File_iwrite(fh, &value, 1, MPI_INT, &request), MPI_SUCCESS);
                        MPI_Status status;
                        MPI_Error_class(MPI_Wait(&request, &status), &error_class);
                        EXPECT_EQ(error_class, MPI_ERR_NO_SPACE);
                        MPI_File_close(&fh);
                      }),
            0);
}

}  // namespace
