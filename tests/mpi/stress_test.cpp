// 100 000 messages of random sizes, tags and destinations among 32 ranks, received through
// wildcards: none lost, none duplicated, none corrupted, and per (sender, tag) in sending order.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "mpi_test_util.h"
#include "weft/sync.h"

namespace {

constexpr int kRanks = 32;
constexpr int kRounds = 10;
constexpr int kPerRankPerRound = 100'000 / (kRanks * kRounds);
constexpr int kTags = 4;
constexpr std::size_t kMaxBytes = 32 * 1024;

struct Planned {
  int dest;
  int tag;
  std::size_t bytes;  // at least a header
};

struct Header {
  std::int32_t sender;
  std::int32_t tag;
  std::int64_t sequence;   // per (sender, dest, tag)
  std::uint64_t checksum;  // of the bytes after the header
};

// Mostly small messages, some around the eager limit, a few far above it.
std::size_t random_bytes(std::mt19937_64& random) {
  const unsigned kind = random() % 100;
  const std::size_t limit = kind < 85 ? 64 : kind < 98 ? 12 * 1024 : kMaxBytes;
  return sizeof(Header) + random() % (limit - sizeof(Header) + 1);
}

// The plan of round `round` for `sender`: every rank computes every plan the same way.
std::vector<Planned> plan(int round, int sender) {
  std::mt19937_64 random(static_cast<std::uint64_t>(round) * 1000 + static_cast<unsigned>(sender));
  std::vector<Planned> messages(kPerRankPerRound);
  for (Planned& m : messages) {
    m.dest = static_cast<int>(random() % kRanks);
    m.tag = static_cast<int>(random() % kTags);
    m.bytes = random_bytes(random);
  }
  return messages;
}

std::uint64_t checksum(const unsigned char* data, std::size_t n) {
  std::uint64_t sum = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) sum = (sum ^ data[i]) * 1099511628211ull;
  return sum;
}

// round_end is null when the ranks are spread over processes (a scheduler barrier holds the ranks
// of one process only): MPI_Barrier ends the rounds then.
void run_rank(int rank, std::atomic<long>& received_total, weft::Barrier* round_end) {
  // next_sent[dest][tag] and next_expected[sender][tag]
  std::vector<std::vector<std::int64_t>> next_sent(kRanks, std::vector<std::int64_t>(kTags, 0));
  std::vector<std::vector<std::int64_t>> next_expected(kRanks, std::vector<std::int64_t>(kTags, 0));
  std::mt19937_64 fill(static_cast<std::uint64_t>(rank) + 77);
  std::vector<unsigned char> in(kMaxBytes);
  for (int round = 0; round < kRounds; ++round) {
    const std::vector<Planned> mine = plan(round, rank);
    int expected = 0;
    for (int sender = 0; sender < kRanks; ++sender) {
      for (const Planned& m : plan(round, sender)) expected += m.dest == rank;
    }
    std::vector<std::vector<unsigned char>> out(mine.size());
    std::vector<MPI_Request> requests(mine.size());
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const Planned& m = mine[i];
      out[i].resize(m.bytes);
      for (std::size_t b = sizeof(Header); b < m.bytes; ++b) {
        out[i][b] = static_cast<unsigned char>(fill());
      }
      Header header{rank, m.tag, next_sent[m.dest][m.tag]++,
                    checksum(out[i].data() + sizeof(Header), m.bytes - sizeof(Header))};
      std::memcpy(out[i].data(), &header, sizeof header);
      // Some synchronous sends too, to mix every protocol.
      if (i % 10 == 0) {
        MPI_Issend(out[i].data(), static_cast<int>(m.bytes), MPI_BYTE, m.dest, m.tag,
                   MPI_COMM_WORLD, &requests[i]);
      } else {
        MPI_Isend(out[i].data(), static_cast<int>(m.bytes), MPI_BYTE, m.dest, m.tag, MPI_COMM_WORLD,
                  &requests[i]);
      }
    }
    for (int r = 0; r < expected; ++r) {
      MPI_Status status;
      if (r % 3 == 0) {
        // Probe first, then receive exactly that message.
        MPI_Message message;
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &message, &status);
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        MPI_Mrecv(in.data(), bytes, MPI_BYTE, &message, &status);
      } else {
        MPI_Recv(in.data(), static_cast<int>(kMaxBytes), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                 MPI_COMM_WORLD, &status);
      }
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      ASSERT_GE(bytes, static_cast<int>(sizeof(Header)));
      Header header;
      std::memcpy(&header, in.data(), sizeof header);
      ASSERT_EQ(header.sender, status.MPI_SOURCE);
      ASSERT_EQ(header.tag, status.MPI_TAG);
      ASSERT_EQ(header.sequence, next_expected[header.sender][header.tag]++)
          << "from " << header.sender << " tag " << header.tag;
      ASSERT_EQ(header.checksum, checksum(in.data() + sizeof(Header),
                                          static_cast<std::size_t>(bytes) - sizeof(Header)));
      received_total.fetch_add(1);
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    // Nothing left over from this round.
    int flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    EXPECT_FALSE(flag);
    // Every rank finishes the round before anyone starts the next: the next round's messages
    // must not be taken for this round's (a scheduler barrier in one process: collectives are
    // not under test).
    if (round_end != nullptr) {
      round_end->arrive_and_wait();
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

TEST(Stress, HundredThousandRandomMessagesAmong32Ranks) {
  for (int vps : {1, 2}) {
    weft::testing::Shared<std::atomic<long>> received_total(0);
    weft::Barrier round_end(kRanks);
    weft::Barrier* barrier = weft::testing::test_processes() > 1 ? nullptr : &round_end;
    EXPECT_EQ(weft::testing::run_ranks(kRanks, vps,
                                       [&](int rank) { run_rank(rank, *received_total, barrier); }),
              0);
    EXPECT_EQ(received_total->load(), static_cast<long>(kRanks) * kRounds * kPerRankPerRound);
  }
}

}  // namespace
