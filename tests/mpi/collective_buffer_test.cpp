// The collective buffers of a collective write (mpi/io/collective_buffer.h) driven directly, in one
// process of 8 ranks on 2 cores: a run of pieces with nothing in a window is never handed out as a
// fill of that window (a block-distributed array leaves most ranks out of each window), and the
// file holds every byte, for pieces laid out rank after rank and interleaved, with the ranks that
// share the writer's core leaving the fills to the others. Windows of large pieces are written
// straight from the ranks' memory (no fill at all): interleaved pieces from strided memory, more of
// them in a window than one pwritev takes (IOV_MAX), holes that keep the file's earlier bytes, and
// pieces adjacent in the file and in memory, land byte for byte; 512-byte pieces stay direct where
// the windows' edges cut them. That is on one core: on two, where the writer writes on its own core
// while the other fills, the same windows are filled. Windows grow from the first window's size to
// the buffer's, each ending at a multiple of its size. Ranks whose pieces are made window by window
// (PieceSource) are asked for the windows their range meets only, once each; an empty rank is never
// asked.
#include "io/collective_buffer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>
#include <utility>
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
constexpr std::byte kEarlier{0xEE};

std::byte byte_of(int rank, std::size_t i) {
  return static_cast<std::byte>((rank * 31 + static_cast<int>(i) * 7) % 253);
}

// Piece i of rank r lies at `place(r, i)` in the file; a negative place: the rank has no such
// piece (a hole).
using Place = MPI_Offset (*)(int rank, std::size_t i);

// The pieces of every rank: `pieces` of `piece` bytes, piece i at i * `stride` of its memory.
struct Layout {
  std::size_t piece = kPiece;
  std::size_t pieces = kPieces;
  std::size_t stride = kPiece;
  std::size_t file_bytes = kFileBytes;
  BufferGeometry geometry = kGeometry;
  // Each rank's pieces made window by window by a PieceSource (a rank's deferred access).
  bool deferred = false;
  int cores = 2;
};

// A rank's range asked of its PieceSource by a window's plan.
struct Asked {
  int rank;
  MPI_Offset from, to;
};

struct Outcome {
  std::vector<std::size_t> copies = std::vector<std::size_t>(kRanks, 0);
  std::size_t direct_windows = 0;
  std::vector<Asked> asked;  // with Layout::deferred, in no particular order
};

// A rank's pieces made on demand, as a deferred access makes them: those in the range asked,
// cut at its edges; each call recorded.
class RankSource final : public PieceSource {
 public:
  RankSource(int rank, const std::vector<Piece>& pieces, Mutex& mutex, std::vector<Asked>& asked)
      : rank_(rank), pieces_(pieces), mutex_(mutex), asked_(asked) {}
  void pieces_in(MPI_Offset from, MPI_Offset to, std::vector<Piece>& out) const override {
    {
      std::lock_guard lock(mutex_);
      asked_.push_back({rank_, from, to});
    }
    for (const Piece& p : pieces_) {
      const MPI_Offset start = std::max(p.file, from);
      const MPI_Offset end = std::min(p.file + static_cast<MPI_Offset>(p.length), to);
      if (start < end) {
        out.push_back({start, p.memory + (start - p.file), static_cast<std::size_t>(end - start)});
      }
    }
  }

 private:
  int rank_;
  const std::vector<Piece>& pieces_;
  Mutex& mutex_;
  std::vector<Asked>& asked_;
};

// Every rank writes its pieces through one BufferedWrite that the writer builds and claims
// before the others see it; right after, each rank overwrites its memory (the writer must have
// read it before anyone returns). The file's bytes are then checked against `place`, and the
// bytes no piece covers against what the file held before.
Outcome write_through_buffers(const char* name, Place place, const Layout& layout = {}) {
  weft::testing::TestFile path("weft_collective_buffer_", name);
  const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  EXPECT_GE(fd, 0);
  const std::vector<std::byte> earlier(layout.file_bytes, kEarlier);
  EXPECT_EQ(::pwrite(fd, earlier.data(), earlier.size(), 0), static_cast<ssize_t>(earlier.size()));
  const std::size_t rank_bytes = layout.stride * layout.pieces;
  std::vector<std::vector<std::byte>> data(kRanks, std::vector<std::byte>(rank_bytes));
  std::vector<std::vector<Piece>> pieces(kRanks);
  std::atomic<BufferedWrite*> shared{nullptr};
  Outcome outcome;
  Mutex asked_mutex;
  std::vector<RankSource> sources;
  for (int r = 0; r < kRanks; ++r) {
    sources.emplace_back(r, pieces[static_cast<std::size_t>(r)], asked_mutex, outcome.asked);
  }
  EXPECT_EQ(weft::testing::run_ranks(
                kRanks, layout.cores,
                [&](int rank) {
                  auto& mine = data[static_cast<std::size_t>(rank)];
                  for (std::size_t i = 0; i < rank_bytes; ++i) {
                    mine[i] = byte_of(rank, i);
                  }
                  for (std::size_t i = 0; i < layout.pieces; ++i) {
                    if (place(rank, i) < 0) continue;
                    pieces[static_cast<std::size_t>(rank)].push_back(
                        {place(rank, i), mine.data() + i * layout.stride, layout.piece});
                  }
                  MPI_Barrier(MPI_COMM_WORLD);
                  std::unique_ptr<BufferedWrite> write;
                  if (rank == kWriter && layout.deferred) {
                    // Only the ranges are handed over: no piece list at all.
                    std::vector<std::span<const Piece>> lists(kRanks);
                    std::vector<Shape> shapes;
                    std::vector<const PieceSource*> makers;
                    for (int r = 0; r < kRanks; ++r) {
                      const Shape shape = shape_of(pieces[static_cast<std::size_t>(r)]);
                      shapes.push_back(shape);
                      makers.push_back(&sources[static_cast<std::size_t>(r)]);
                    }
                    write =
                        std::make_unique<BufferedWrite>(fd, lists, layout.geometry, shapes, makers);
                    write->claim_writer();
                    shared.store(write.get(), std::memory_order_release);
                  } else if (rank == kWriter) {
                    std::vector<std::span<const Piece>> lists(pieces.begin(), pieces.end());
                    write = std::make_unique<BufferedWrite>(fd, lists, layout.geometry);
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
                    outcome.direct_windows = w->direct_windows();
                  }
                  // As MPI_File_write_all's caller may once the call has returned: the writer
                  // has returned from run() only once every window is in the file.
                  MPI_Barrier(MPI_COMM_WORLD);
                  std::fill(mine.begin(), mine.end(), std::byte{0});
                  MPI_Barrier(MPI_COMM_WORLD);
                }),
            0);
  std::vector<std::byte> file(layout.file_bytes);
  EXPECT_EQ(::pread(fd, file.data(), file.size(), 0), static_cast<ssize_t>(file.size()));
  ::close(fd);
  std::vector<bool> covered(layout.file_bytes, false);
  for (int r = 0; r < kRanks; ++r) {
    for (std::size_t i = 0; i < layout.pieces; ++i) {
      if (place(r, i) < 0) continue;
      for (std::size_t k = 0; k < layout.piece; ++k) {
        const auto at = static_cast<std::size_t>(place(r, i)) + k;
        covered[at] = true;
        const std::byte expected = byte_of(r, i * layout.stride + k);
        EXPECT_EQ(file[at], expected) << "rank " << r << " piece " << i << " byte " << k;
        if (file[at] != expected) return outcome;
      }
    }
  }
  for (std::size_t at = 0; at < layout.file_bytes; ++at) {
    EXPECT_TRUE(covered[at] || file[at] == kEarlier) << "hole byte " << at << " was written";
    if (!covered[at] && file[at] != kEarlier) break;
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
  EXPECT_EQ(outcome.direct_windows, 0U) << "100-byte pieces go through the buffers";
}

TEST(CollectiveBuffers, WindowsGrowFromTheFirstWindowBytes) {
  // The same blocks through windows of 4000, 8000, 16000, then 32000 bytes, each ending at a
  // multiple of its size: [0, 4000), [4000, 8000) and [8000, 16000) hold rank 0's pieces,
  // [16000, 32000) rank 1's, and the three windows of 32000 two ranks' each: 10 fills, where
  // windows of 32000 from the start would make 8 (two ranks a window), and windows that each
  // start where the previous ended ([4000, 12000), [12000, 28000), [28000, 60000)...) 14.
  Layout layout;
  layout.geometry = BufferGeometry{32000, 500, 4000};
  const Outcome outcome = write_through_buffers(
      "growing",
      [](int rank, std::size_t i) {
        return static_cast<MPI_Offset>(static_cast<std::size_t>(rank) * kRankBytes + i * kPiece);
      },
      layout);
  EXPECT_EQ(total(outcome.copies), 10U);
  EXPECT_EQ(outcome.direct_windows, 0U);
}

TEST(CollectiveBuffers, InterleavedPiecesLandInPlace) {
  // Piece i of every rank side by side: every window holds five pieces of every rank.
  const Outcome outcome = write_through_buffers("interleaved", [](int rank, std::size_t i) {
    return static_cast<MPI_Offset>((i * kRanks + static_cast<std::size_t>(rank)) * kPiece);
  });
  EXPECT_EQ(total(outcome.copies), kFileBytes / kGeometry.buffer_bytes * kRanks);
}

// Pieces of kDirectVectorBytes and more: 8 ranks' 600-byte pieces side by side in the file, each
// rank's taken from every other 600 bytes of its memory (a strided memory type), through 1 MiB
// windows: 1747 pieces a window, more than one pwritev takes, none adjacent in memory.
constexpr std::size_t kLargePiece = 600;
constexpr std::size_t kLargePieces = 600;                                     // per rank
constexpr std::size_t kLargeFileBytes = kLargePiece * kLargePieces * kRanks;  // 2880000: 3 windows
static_assert(kLargePiece >= kDirectVectorBytes);
static_assert((std::size_t{1} << 20) / kLargePiece > IOV_MAX);
// On one core: the writer alone (its pwrite calls on spare kernel threads) writes them direct.
constexpr Layout kLarge{kLargePiece,
                        kLargePieces,
                        2 * kLargePiece,
                        kLargeFileBytes,
                        BufferGeometry{std::size_t{1} << 20, 4096},
                        false,
                        1};

TEST(CollectiveBuffers, LargePiecesGoStraightFromStridedMemory) {
  const Outcome outcome = write_through_buffers(
      "direct",
      [](int rank, std::size_t i) {
        return static_cast<MPI_Offset>((i * kRanks + static_cast<std::size_t>(rank)) * kLargePiece);
      },
      kLarge);
  EXPECT_EQ(total(outcome.copies), 0U) << "nothing is copied into a collective buffer";
  EXPECT_EQ(outcome.direct_windows, 3U);
}

TEST(CollectiveBuffers, TwoCoresFillWindowsOfLargePieces) {
  // The same pieces on two cores: the writer writes on its own core while the other fills, so
  // every window is filled and written with one pwrite (its pwritev would cost it more).
  Layout layout = kLarge;
  layout.cores = 2;
  const Outcome outcome = write_through_buffers(
      "filled_large",
      [](int rank, std::size_t i) {
        return static_cast<MPI_Offset>((i * kRanks + static_cast<std::size_t>(rank)) * kLargePiece);
      },
      layout);
  EXPECT_EQ(outcome.direct_windows, 0U);
  EXPECT_GT(total(outcome.copies), 0U);
}

TEST(CollectiveBuffers, DirectWindowsKeepHoles) {
  // Rank 3 writes nothing and rank 5 every other piece: the holes keep the file's bytes.
  const Outcome outcome = write_through_buffers(
      "direct_holes",
      [](int rank, std::size_t i) {
        if (rank == 3 || (rank == 5 && i % 2 == 1)) return MPI_Offset{-1};
        return static_cast<MPI_Offset>((i * kRanks + static_cast<std::size_t>(rank)) * kLargePiece);
      },
      kLarge);
  EXPECT_EQ(total(outcome.copies), 0U);
  EXPECT_EQ(outcome.direct_windows, 3U);
}

TEST(CollectiveBuffers, DirectWindowsMergePiecesAdjacentInFileAndMemory) {
  // Rank after rank from contiguous memory: each rank's pieces are one block of the file and of
  // its memory, cut by the windows' bounds (which are not multiples of the pieces).
  Layout layout = kLarge;
  layout.stride = kLargePiece;
  const Outcome outcome = write_through_buffers(
      "direct_adjacent",
      [](int rank, std::size_t i) {
        return static_cast<MPI_Offset>((static_cast<std::size_t>(rank) * kLargePieces + i) *
                                       kLargePiece);
      },
      layout);
  EXPECT_EQ(total(outcome.copies), 0U);
  EXPECT_EQ(outcome.direct_windows, 3U);
}

TEST(CollectiveBuffers, PiecesOf512BytesStayDirectWhereWindowsCutThem) {
  // Rows of 64 doubles after a 100-byte header: each window's edges cut a piece, which is then
  // counted in two windows (8193 pieces in a 4 MiB one, 511.9 bytes on average). The third
  // window holds the last 100 bytes of one piece alone: that one is copied.
  constexpr std::size_t kRow = 512, kRows = 2048;  // per rank: 8 MiB and 100 bytes in all
  Layout layout{
      kRow,  kRows, kRow, 100 + kRow * kRows * kRanks, BufferGeometry{std::size_t{4} << 20, 4096},
      false, 1};
  const Outcome outcome = write_through_buffers(
      "direct_header",
      [](int rank, std::size_t i) {
        return static_cast<MPI_Offset>(100 + (i * kRanks + static_cast<std::size_t>(rank)) * kRow);
      },
      layout);
  EXPECT_EQ(total(outcome.copies), 1U);
  EXPECT_EQ(outcome.direct_windows, 2U);
}

// The windows of a write of 100-byte pieces through 4000-byte windows, each rank's pieces made
// window by window: [start, end) of each, for the pieces in [0, kFileBytes).
std::vector<std::pair<MPI_Offset, MPI_Offset>> windows_of(MPI_Offset low, MPI_Offset high) {
  std::vector<std::pair<MPI_Offset, MPI_Offset>> windows;
  const auto size = static_cast<MPI_Offset>(kGeometry.buffer_bytes);
  for (MPI_Offset origin = low / 500 * 500; origin < high; origin += size) {
    windows.emplace_back(std::max(low, origin), std::min(high, origin + size));
  }
  return windows;
}

// Each rank's source is asked once for each window its range meets, for exactly that window,
// and never for one its range does not meet.
void expect_asked_window_by_window(const Outcome& outcome, Place place, std::size_t pieces) {
  MPI_Offset low = std::numeric_limits<MPI_Offset>::max(), high = 0;
  std::vector<std::pair<MPI_Offset, MPI_Offset>> ranges(kRanks, {-1, -1});
  for (int r = 0; r < kRanks; ++r) {
    for (std::size_t i = 0; i < pieces; ++i) {
      const MPI_Offset at = place(r, i);
      if (at < 0) continue;
      auto& range = ranges[static_cast<std::size_t>(r)];
      range.first = range.first < 0 ? at : std::min(range.first, at);
      range.second = std::max(range.second, at + static_cast<MPI_Offset>(kPiece));
      low = std::min(low, at);
      high = std::max(high, at + static_cast<MPI_Offset>(kPiece));
    }
  }
  std::vector<Asked> expected;
  for (const auto& [start, end] : windows_of(low, high)) {
    for (int r = 0; r < kRanks; ++r) {
      const auto& range = ranges[static_cast<std::size_t>(r)];
      if (range.first >= 0 && range.first < end && range.second > start) {
        expected.push_back({r, start, end});
      }
    }
  }
  std::vector<Asked> asked = outcome.asked;
  auto order = [](const Asked& a, const Asked& b) {
    return std::tie(a.from, a.rank) < std::tie(b.from, b.rank);
  };
  std::sort(asked.begin(), asked.end(), order);
  ASSERT_EQ(asked.size(), expected.size());
  for (std::size_t k = 0; k < asked.size(); ++k) {
    EXPECT_EQ(asked[k].rank, expected[k].rank) << "call " << k;
    EXPECT_EQ(asked[k].from, expected[k].from) << "call " << k;
    EXPECT_EQ(asked[k].to, expected[k].to) << "call " << k;
  }
}

TEST(CollectiveBuffers, DeferredPiecesAreMadeWindowByWindow) {
  // Rank after rank, each rank's range four windows: a rank is asked for its pieces of the
  // windows its range meets only, once each, and the bytes land as with made lists.
  Layout layout;
  layout.deferred = true;
  const Place blocks = [](int rank, std::size_t i) {
    return static_cast<MPI_Offset>(static_cast<std::size_t>(rank) * kRankBytes + i * kPiece);
  };
  const Outcome outcome = write_through_buffers("deferred_blocks", blocks, layout);
  expect_asked_window_by_window(outcome, blocks, kPieces);
  EXPECT_EQ(total(outcome.copies), kFileBytes / kGeometry.buffer_bytes);
}

TEST(CollectiveBuffers, DeferredPiecesWithEmptyRanksAndHoles) {
  // Interleaved, rank 2 writing nothing (no range: never asked), rank 6 only its first 40
  // pieces (asked for the first windows only), rank 4 every other piece (holes that keep the
  // file's bytes).
  Layout layout;
  layout.deferred = true;
  const Place place = [](int rank, std::size_t i) {
    if (rank == 2 || (rank == 6 && i >= 40) || (rank == 4 && i % 2 == 1)) return MPI_Offset{-1};
    return static_cast<MPI_Offset>((i * kRanks + static_cast<std::size_t>(rank)) * kPiece);
  };
  const Outcome outcome = write_through_buffers("deferred_holes", place, layout);
  expect_asked_window_by_window(outcome, place, kPieces);
  for (const Asked& asked : outcome.asked) EXPECT_NE(asked.rank, 2) << "an empty rank was asked";
}

}  // namespace
}  // namespace weft::mpi::io
