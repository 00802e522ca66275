// The collective buffers of a collective write (mpi/io/collective_buffer.h) driven directly, in
// one process of 8 ranks on 2 cores: a run of pieces with nothing in a window is never handed
// out as a fill of that window (a block-distributed array leaves most ranks out of each window),
// and the file holds every byte, for pieces laid out rank after rank and interleaved, with the
// ranks that share the writer's core leaving the fills to the others.
#include "io/collective_buffer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "mpi_test_util.h"
#include "test_file.h"
#include "weft/this_thread.h"

namespace weft::mpi::io {
namespace {

constexpr int kRanks = 8;
constexpr int kWriter = kRanks - 1;
constexpr std::size_t kPiece = 100;   // bytes of a piece
constexpr std::size_t kPieces = 160;  // per rank
constexpr std::size_t kRankBytes = kPiece * kPieces;
constexpr std::size_t kFileBytes = kRankBytes * kRanks;  // 128000: 32 windows of 4000
constexpr BufferGeometry kGeometry{4000, 500};

std::byte byte_of(int rank, std::size_t i) {
  return static_cast<std::byte>((rank * 31 + static_cast<int>(i) * 7) % 253);
}

// Piece i of rank r lies at `place(r, i)` in the file.
using Place = MPI_Offset (*)(int rank, std::size_t i);

struct Outcome {
  std::vector<std::size_t> copies = std::vector<std::size_t>(kRanks, 0);
};

// Every rank writes its pieces through one BufferedWrite that the writer builds and claims
// before the others see it; the file's bytes are then checked against `place`.
Outcome write_through_buffers(const char* name, Place place) {
  weft::testing::TestFile path("weft_collective_buffer_", name);
  const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  EXPECT_GE(fd, 0);
  std::vector<std::vector<std::byte>> data(kRanks, std::vector<std::byte>(kRankBytes));
  std::vector<std::vector<Piece>> pieces(kRanks);
  std::atomic<BufferedWrite*> shared{nullptr};
  Outcome outcome;
  EXPECT_EQ(weft::testing::run_ranks(
                kRanks, 2,
                [&](int rank) {
                  auto& mine = data[static_cast<std::size_t>(rank)];
                  for (std::size_t i = 0; i < kRankBytes; ++i) {
                    mine[i] = byte_of(rank, i);
                  }
                  for (std::size_t i = 0; i < kPieces; ++i) {
                    pieces[static_cast<std::size_t>(rank)].push_back(
                        {place(rank, i), mine.data() + i * kPiece, kPiece});
                  }
                  MPI_Barrier(MPI_COMM_WORLD);
                  std::unique_ptr<BufferedWrite> write;
                  if (rank == kWriter) {
                    std::vector<std::span<const Piece>> sources(pieces.begin(), pieces.end());
                    write = std::make_unique<BufferedWrite>(fd, sources, kGeometry);
                    write->claim_writer();
                    shared.store(write.get(), std::memory_order_release);
                  }
                  BufferedWrite* w = nullptr;
                  while ((w = shared.load(std::memory_order_acquire)) == nullptr) {
                    weft::this_thread::yield();
                  }
                  outcome.copies[static_cast<std::size_t>(rank)] = w->run(rank == kWriter);
                  if (rank == kWriter) {
                    EXPECT_EQ(w->error(), 0);
                  }
                  MPI_Barrier(MPI_COMM_WORLD);
                }),
            0);
  std::vector<std::byte> file(kFileBytes);
  EXPECT_EQ(::pread(fd, file.data(), kFileBytes, 0), static_cast<ssize_t>(kFileBytes));
  ::close(fd);
  for (int r = 0; r < kRanks; ++r) {
    for (std::size_t i = 0; i < kPieces; ++i) {
      for (std::size_t k = 0; k < kPiece; ++k) {
        const auto at = static_cast<std::size_t>(place(r, i)) + k;
        EXPECT_EQ(file[at], byte_of(r, i * kPiece + k))
            << "rank " << r << " piece " << i << " byte " << k;
        if (file[at] != byte_of(r, i * kPiece + k)) return outcome;
      }
    }
  }
  return outcome;
}

std::size_t total(const std::vector<std::size_t>& copies) {
  std::size_t sum = 0;
  for (std::size_t c : copies) sum += c;
  return sum;
}

TEST(CollectiveBuffers, RunsOutsideAWindowAreNotHandedOut) {
  // Rank after rank: each 4000-byte window holds pieces of one rank (16000 bytes a rank), so
  // 32 fills in all, where handing every rank's run to every window would make 256.
  const Outcome outcome = write_through_buffers("blocks", [](int rank, std::size_t i) {
    return static_cast<MPI_Offset>(static_cast<std::size_t>(rank) * kRankBytes + i * kPiece);
  });
  EXPECT_EQ(total(outcome.copies), kFileBytes / kGeometry.buffer_bytes);
}

TEST(CollectiveBuffers, InterleavedPiecesLandInPlace) {
  // Piece i of every rank side by side: every window holds five pieces of every rank.
  const Outcome outcome = write_through_buffers("interleaved", [](int rank, std::size_t i) {
    return static_cast<MPI_Offset>((i * kRanks + static_cast<std::size_t>(rank)) * kPiece);
  });
  EXPECT_EQ(total(outcome.copies), kFileBytes / kGeometry.buffer_bytes * kRanks);
}

}  // namespace
}  // namespace weft::mpi::io
