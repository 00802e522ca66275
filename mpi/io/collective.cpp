#include "io/collective.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <memory>

#include "coll/meeting.h"
#include "comm/communicator.h"
#include "io/hints.h"
#include "io/two_phase.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"

namespace weft::mpi::io {
namespace {

// One rank's side of the call, published in the meeting; the aggregator writes the results.
struct Side {
  const std::vector<Piece>* pieces = nullptr;
  int group = 0;  // the ranks of one group have one aggregator (aggregation_group)
  long long moved = 0;
  int error = 0;
};

// File calls meet apart from the communicator's own collectives (which use the call numbers
// below 2^62) and from the calls spanning processes (2^63 and up).
constexpr std::uint64_t kFileCalls = std::uint64_t{1} << 62;

// The bytes of `pieces` (stream order) that lie before the end of the file at `end`, up to the
// first piece cut short.
long long readable(const std::vector<Piece>& pieces, MPI_Offset end) {
  long long moved = 0;
  for (const Piece& piece : pieces) {
    const MPI_Offset available = std::max<MPI_Offset>(0, end - piece.file);
    const auto take = std::min<MPI_Offset>(available, static_cast<MPI_Offset>(piece.length));
    moved += take;
    if (take < static_cast<MPI_Offset>(piece.length)) break;
  }
  return moved;
}

// Every side of the meeting (parking until each has published), and all their pieces.
std::vector<Side*> gather(Meeting& meeting, std::vector<Piece>& all) {
  std::vector<Side*> sides;
  for (int slot = 0; slot < meeting.size(); ++slot) {
    auto* side = static_cast<Side*>(const_cast<void*>(meeting.arguments(slot)));
    sides.push_back(side);
    all.insert(all.end(), side->pieces->begin(), side->pieces->end());
  }
  return sides;
}

// Each side's result: the bytes of its stream moved (for a read, those before the end of the file
// at `end`), or the error.
void finish(const std::vector<Side*>& sides, int error, MPI_Offset end, bool write) {
  for (Side* side : sides) {
    side->error = error;
    long long requested = 0;
    for (const Piece& piece : *side->pieces) requested += static_cast<long long>(piece.length);
    side->moved = error != 0 ? -1 : write ? requested : readable(*side->pieces, end);
  }
}

// The aggregator's work inside one process: every side's pieces, merged by file offset, in
// extents of the file.
void aggregate(File& file, Meeting& meeting, bool write) {
  std::vector<Piece> all;
  const std::vector<Side*> sides = gather(meeting, all);
  // Stable: pieces at one offset keep the ranks' order.
  std::stable_sort(all.begin(), all.end(),
                   [](const Piece& a, const Piece& b) { return a.file < b.file; });
  const int fd = file.fd;
  MPI_Offset end = 0;
  int error = move(fd, all, write) < 0 ? errno : 0;
  struct stat st {};
  if (error == 0 && !write) error = ::fstat(fd, &st) != 0 ? errno : 0;
  end = st.st_size;
  finish(sides, error, end, write);
}

// Which aggregator moves the calling rank's part inside the process. A write has one per NUMA
// node: a file system makes the buffered writes to one file one after the other (Linux holds
// the inode's lock across each), so more writers on a node would only wait for each other, and
// one per node keeps the copies from memory local. A read has one per core: copies out of the
// page cache take no file-wide lock and run in parallel, as the processes of Open MPI's
// aggregators do. Off weft's cores (a kernel thread of the rank's), one group of its own.
int aggregation_group(bool write) {
  const Scheduler* scheduler = Scheduler::current();
  const int vp = this_thread::vp();
  if (scheduler == nullptr || vp < 0) return -1;
  return write ? scheduler->vp_numa(vp) : vp;
}

// Several aggregators inside a process: the range of the call cut into one file domain per
// group, each written (or read) by the group's lowest rank, from the memory of every rank.
struct Domains {
  std::vector<Side*> sides;
  std::vector<std::vector<Piece>> pieces;  // by domain
  std::vector<int> aggregator;             // by domain: the slot that moves it
  std::vector<int> errors;                 // by domain
};

// The domains of the call, or nullptr when the ranks of the process form one group.
std::shared_ptr<Domains> plan_domains(Meeting& meeting) {
  std::vector<Piece> all;
  auto domains = std::make_shared<Domains>();
  domains->sides = gather(meeting, all);
  std::vector<int> nodes;
  for (const Side* side : domains->sides) nodes.push_back(side->group);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (nodes.size() < 2) return nullptr;
  MPI_Offset low = std::numeric_limits<MPI_Offset>::max(), high = 0;
  for (const Piece& piece : all) {
    low = std::min(low, piece.file);
    high = std::max(high, piece.file + static_cast<MPI_Offset>(piece.length));
  }
  domains->pieces = split_domains(all, low, high, nodes.size());
  for (auto& domain : domains->pieces) {
    std::stable_sort(domain.begin(), domain.end(),
                     [](const Piece& a, const Piece& b) { return a.file < b.file; });
  }
  for (int node : nodes) {
    int slot = 0;
    while (domains->sides[static_cast<std::size_t>(slot)]->group != node) ++slot;
    domains->aggregator.push_back(slot);
  }
  domains->errors.assign(nodes.size(), 0);
  return domains;
}

// The heads of the processes meet: each sends an empty message to every other and receives one
// from each, so that no process leaves before every process's part is in the file.
void meet_processes(File& file, std::uint64_t call) {
  const Comm& comm = *file.comm;
  const int tag = message_tag(call, 4);
  std::vector<MPI_Request> requests;
  for (std::size_t g = 0; g < comm.groups.ranks.size(); ++g) {
    if (static_cast<int>(g) == comm.groups.local) continue;
    const int head = comm.groups.ranks[g].front();
    requests.emplace_back();
    PMPI_Irecv(nullptr, 0, MPI_BYTE, head, tag, file.comm, &requests.back());
    requests.emplace_back();
    PMPI_Isend(nullptr, 0, MPI_BYTE, head, tag, file.comm, &requests.back());
  }
  PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

}  // namespace

long long collective_transfer(File& file, std::uint64_t call, const std::vector<Piece>& pieces,
                              bool write, int& error) {
  const std::vector<int>& ranks = local_ranks(file);
  const int size = static_cast<int>(ranks.size());
  const auto slot =
      static_cast<int>(std::find(ranks.begin(), ranks.end(), file.rank) - ranks.begin());
  std::shared_ptr<Meeting> meeting =
      file.comm->meetings.join<Meeting>(kFileCalls | call, call, size, "a collective file access",
                                        [size] { return std::make_shared<Meeting>(size); });
  Side side;
  side.pieces = &pieces;
  const bool spans = file.comm->spans_processes;
  if (!collective_buffering(file, write)) {
    // Each rank moves its own pieces; the meeting only orders the ranks.
    side.moved = transfer_managed(file, pieces, write);
    side.error = side.moved < 0 ? errno : 0;
    meeting->publish(slot, &side);
    meeting->phase();
    if (spans && slot == 0) meet_processes(file, call);
  } else if (!spans) {
    side.group = aggregation_group(write);
    meeting->publish(slot, &side);
    std::shared_ptr<Domains> domains;
    meeting->phase([&] {
      domains = plan_domains(*meeting);
      // One group: the last rank to arrive moves everything at once.
      if (domains == nullptr) aggregate(file, *meeting, write);
      meeting->shared = domains;
    });
    if (auto* d = static_cast<Domains*>(meeting->shared.get()); d != nullptr) {
      for (std::size_t k = 0; k < d->pieces.size(); ++k) {
        if (d->aggregator[k] == slot)
          d->errors[k] = move(file.fd, d->pieces[k], write) < 0 ? errno : 0;
      }
      meeting->phase([&] {
        int rc = 0;
        for (int e : d->errors) rc = rc != 0 ? rc : e;
        struct stat st {};
        if (rc == 0 && !write && ::fstat(file.fd, &st) != 0) rc = errno;
        finish(d->sides, rc, st.st_size, write);
      });
    }
  } else {
    meeting->publish(slot, &side);
    if (slot == 0) {
      // The head aggregates its process and takes part in the two-phase exchange.
      std::vector<Piece> all;
      const std::vector<Side*> sides = gather(*meeting, all);
      MPI_Offset end = 0;
      const int rc = two_phase(file, call, all, write, end);
      finish(sides, rc, end, write);
    }
  }
  // Every rank of the process waits for its head (and so for the other processes).
  if (spans) meeting->phase();
  error = side.error;
  return side.moved;
}

}  // namespace weft::mpi::io
