#include "io/two_phase.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "comm/communicator.h"
#include "io/hints.h"

namespace weft::mpi::io {

// A range of tags of their own below kNonblockingCollectiveTag: five rounds per call.
int message_tag(std::uint64_t call, int round) {
  constexpr int kTagBase = 1 << 28;
  constexpr int kRounds = 5;
  constexpr int kCallsInFlight = 1 << 24;
  return kTagBase + static_cast<int>(call % kCallsInFlight) * kRounds + round;
}

namespace {

// Every head sends `send[g]` to head g and receives `receive[g]` from it (the own entries are
// left alone); the counts of each pair are known to both sides.
void exchange(File& file, int tag, const std::vector<std::vector<std::byte>>& send,
              std::vector<std::vector<std::byte>>& receive) {
  const Comm& comm = *file.comm;
  std::vector<MPI_Request> requests;
  for (std::size_t g = 0; g < comm.groups.ranks.size(); ++g) {
    if (static_cast<int>(g) == comm.groups.local) continue;
    const int head = comm.groups.ranks[g].front();
    requests.emplace_back();
    PMPI_Irecv_c(receive[g].data(), static_cast<MPI_Count>(receive[g].size()), MPI_BYTE, head, tag,
                 file.comm, &requests.back());
    requests.emplace_back();
    PMPI_Isend_c(send[g].data(), static_cast<MPI_Count>(send[g].size()), MPI_BYTE, head, tag,
                 file.comm, &requests.back());
  }
  PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

template <class T>
std::vector<T> values_of(const std::vector<std::byte>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace

std::vector<std::vector<Piece>> split_domains(const std::vector<Piece>& pieces, MPI_Offset low,
                                              MPI_Offset high, std::size_t count) {
  std::vector<std::vector<Piece>> by_domain(count);
  if (low >= high) return by_domain;
  const auto n = static_cast<MPI_Offset>(count);
  const MPI_Offset domain = (high - low + n - 1) / n;
  for (Piece piece : pieces) {
    while (piece.length > 0) {
      const auto owner = static_cast<std::size_t>((piece.file - low) / domain);
      const MPI_Offset limit = low + static_cast<MPI_Offset>(owner + 1) * domain;
      const auto take = static_cast<std::size_t>(
          std::min<MPI_Offset>(static_cast<MPI_Offset>(piece.length), limit - piece.file));
      by_domain[owner].push_back({piece.file, piece.memory, take});
      piece.file += static_cast<MPI_Offset>(take);
      piece.memory += take;
      piece.length -= take;
    }
  }
  return by_domain;
}

int two_phase(File& file, std::uint64_t call, const std::vector<Piece>& pieces, bool write,
              const DomainWriter& write_domain, MPI_Offset& end) {
  const Comm& comm = *file.comm;
  const auto processes = comm.groups.ranks.size();
  const auto me = static_cast<std::size_t>(comm.groups.local);
  // Round 0: the range each process touches, hence every process's domain.
  MPI_Offset low = std::numeric_limits<MPI_Offset>::max(), high = 0;
  for (const Piece& piece : pieces) {
    low = std::min(low, piece.file);
    high = std::max(high, piece.file + static_cast<MPI_Offset>(piece.length));
  }
  std::vector<std::vector<std::byte>> send(processes), receive(processes);
  for (std::size_t g = 0; g < processes; ++g) {
    send[g] = bytes_of(std::vector<MPI_Offset>{low, high});
    receive[g].resize(2 * sizeof(MPI_Offset));
  }
  exchange(file, message_tag(call, 0), send, receive);
  for (std::size_t g = 0; g < processes; ++g) {
    if (g == me) continue;
    const auto range = values_of<MPI_Offset>(receive[g]);
    low = std::min(low, range[0]);
    high = std::max(high, range[1]);
  }
  // This process's pieces by domain.
  // The first cb_nodes processes' heads aggregate (all by default). Each process decides alone
  // where its pieces go and each head moves what it receives, so processes given different
  // hints still move every piece once.
  const std::size_t hinted = aggregator_processes(file);
  const std::size_t aggregators = hinted == 0 ? processes : std::min(hinted, processes);
  std::vector<std::vector<Piece>> to = split_domains(pieces, low, high, aggregators);
  to.resize(processes);
  // Round 1: how many pieces go to each domain; round 2: their offsets and lengths.
  for (std::size_t g = 0; g < processes; ++g) {
    send[g] = bytes_of(std::vector<long long>{static_cast<long long>(to[g].size())});
    receive[g].assign(sizeof(long long), std::byte{});
  }
  exchange(file, message_tag(call, 1), send, receive);
  for (std::size_t g = 0; g < processes; ++g) {
    std::vector<long long> extents;
    for (const Piece& piece : to[g]) {
      extents.push_back(piece.file);
      extents.push_back(static_cast<long long>(piece.length));
    }
    send[g] = bytes_of(extents);
    const long long count = g == me ? 0 : values_of<long long>(receive[g])[0];
    receive[g].assign(static_cast<std::size_t>(count) * 2 * sizeof(long long), std::byte{});
  }
  exchange(file, message_tag(call, 2), send, receive);
  // The pieces of this domain: this process's own, and every other process's, whose bytes travel
  // in `data[g]` (for a write, what it sent; for a read, what goes back to it).
  std::vector<std::vector<std::byte>> data(processes);
  std::vector<std::vector<long long>> theirs(processes);
  for (std::size_t g = 0; g < processes; ++g) {
    if (g == me) continue;
    theirs[g] = values_of<long long>(receive[g]);
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < theirs[g].size(); i += 2) {
      bytes += static_cast<std::size_t>(theirs[g][i + 1]);
    }
    data[g].resize(bytes);
  }
  if (write) {
    // Round 3: the bytes of the pieces sent to each domain.
    for (std::size_t g = 0; g < processes; ++g) {
      send[g].clear();
      if (g == me) continue;
      for (const Piece& piece : to[g]) {
        send[g].insert(send[g].end(), piece.memory, piece.memory + piece.length);
      }
    }
    exchange(file, message_tag(call, 3), send, data);
  }
  // The pieces of this domain by process (this process's own point into its ranks' memory).
  std::vector<std::vector<Piece>> from(processes);
  from[me] = std::move(to[me]);
  for (std::size_t g = 0; g < processes; ++g) {
    std::size_t at = 0;
    for (std::size_t i = 0; g != me && i < theirs[g].size(); i += 2) {
      const auto length = static_cast<std::size_t>(theirs[g][i + 1]);
      from[g].push_back({theirs[g][i], data[g].data() + at, length});
      at += length;
    }
  }
  const int fd = file.fd;
  int error = 0;
  if (write) {
    error = write_domain(std::vector<std::span<const Piece>>(from.begin(), from.end()));
  } else {
    std::vector<Piece> domain;
    for (const auto& pieces_of : from)
      domain.insert(domain.end(), pieces_of.begin(), pieces_of.end());
    std::stable_sort(domain.begin(), domain.end(),
                     [](const Piece& a, const Piece& b) { return a.file < b.file; });
    error = move(fd, domain, write) < 0 ? errno : 0;
  }
  struct stat st {};
  if (error == 0 && !write) error = ::fstat(fd, &st) != 0 ? errno : 0;
  end = st.st_size;
  if (!write) {
    // Round 3: the bytes read for each other process go back to it, and this process's arrive.
    std::vector<std::vector<std::byte>> mine(processes);
    for (std::size_t g = 0; g < processes; ++g) {
      std::size_t bytes = 0;
      for (const Piece& piece : to[g]) bytes += piece.length;
      if (g != me) mine[g].resize(bytes);
    }
    exchange(file, message_tag(call, 3), data, mine);
    // Bytes past the end of the file were not read: the program's buffer keeps its own there.
    for (std::size_t g = 0; g < processes; ++g) {
      if (g == me) continue;
      std::size_t at = 0;
      for (const Piece& piece : to[g]) {
        const MPI_Offset available = std::max<MPI_Offset>(0, end - piece.file);
        const auto copy = static_cast<std::size_t>(
            std::min<MPI_Offset>(available, static_cast<MPI_Offset>(piece.length)));
        std::memcpy(piece.memory, mine[g].data() + at, copy);
        at += piece.length;
      }
    }
  }
  // The heads tell one another whether their domain failed: every rank then returns the first
  // failure.
  // Made once, not from a temporary vector per process: GCC 12 at -O3 reported a false
  // -Wfree-nonheap-object on the inlined temporary's deallocation.
  const std::vector<std::byte> verdict(reinterpret_cast<const std::byte*>(&error),
                                       reinterpret_cast<const std::byte*>(&error + 1));
  for (std::size_t g = 0; g < processes; ++g) {
    send[g] = verdict;
    receive[g].assign(sizeof(int), std::byte{});
  }
  exchange(file, message_tag(call, 4), send, receive);
  for (std::size_t g = 0; g < processes; ++g) {
    if (g != me && error == 0) error = values_of<int>(receive[g])[0];
  }
  return error;
}

}  // namespace weft::mpi::io
