#include "io/collective.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <memory>
#include <optional>

#include "coll/meeting.h"
#include "comm/communicator.h"
#include "io/collective_buffer.h"
#include "io/hints.h"
#include "io/two_phase.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"

namespace weft::mpi::io {
namespace {

// A rank's deferred access (Access::deferred): its pieces made window by window, from its view.
class Deferred final : public PieceSource {
 public:
  Deferred(const View& view, const Access& access) : view_(view), access_(access) {}
  void pieces_in(MPI_Offset from, MPI_Offset to, std::vector<Piece>& out) const override {
    io::pieces_in(view_, access_, from, to, out);
  }

 private:
  const View& view_;
  const Access& access_;
};

// One rank's side of the call, published in the meeting; the aggregator writes the results.
struct Side {
  const std::vector<Piece>* pieces = nullptr;
  // A deferred access: `pieces` is empty until a path that needs them all makes them into `made`.
  const Deferred* deferred = nullptr;
  std::vector<Piece> made;
  std::size_t count = 0;  // of the pieces (an estimate for a deferred access)
  std::size_t bytes = 0;  // of the pieces
  Shape shape;            // of the pieces, for a write through collective buffers
  int group = 0;          // the ranks of one group have one aggregator (aggregation_group)
  long long moved = 0;
  int error = 0;
};

// A side's pieces, all of them: a deferred access's are made here (on the aggregator, for the
// paths that do not go window by window).
const std::vector<Piece>& pieces_of(Side& side) {
  if (side.deferred != nullptr) {
    side.deferred->pieces_in(side.shape.low, side.shape.high, side.made);
    side.deferred = nullptr;
    side.pieces = &side.made;
  }
  return *side.pieces;
}

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
    const std::vector<Piece>& pieces = pieces_of(*side);
    all.insert(all.end(), pieces.begin(), pieces.end());
  }
  return sides;
}

// Each side's result: the bytes of its stream moved (for a read, those before the end of the file
// at `end`), or the error.
void finish(const std::vector<Side*>& sides, int error, MPI_Offset end, bool write) {
  for (Side* side : sides) {
    side->error = error;
    side->moved = error != 0 ? -1
                  : write    ? static_cast<long long>(side->bytes)
                             : readable(*side->pieces, end);
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
  // By domain, for a write of small pieces: its collective buffers, filled by the ranks of the
  // domain's node while its aggregator writes them (collective_buffer.h).
  std::vector<std::shared_ptr<BufferedWrite>> buffered;
};

// Every side of the meeting (parking until each has published).
std::vector<Side*> sides_of(Meeting& meeting) {
  std::vector<Side*> sides;
  for (int slot = 0; slot < meeting.size(); ++slot) {
    sides.push_back(static_cast<Side*>(const_cast<void*>(meeting.arguments(slot))));
  }
  return sides;
}

// The domains of the call, or nullptr when the ranks of the process form one group.
std::shared_ptr<Domains> plan_domains(Meeting& meeting) {
  std::vector<int> nodes;
  for (const Side* side : sides_of(meeting)) nodes.push_back(side->group);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (nodes.size() < 2) return nullptr;
  std::vector<Piece> all;
  auto domains = std::make_shared<Domains>();
  domains->sides = gather(meeting, all);
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

// A collective write through collective buffers (collective_buffer.h), when its pieces are
// small: the kernel copies a vector of a pwritev into the page cache at a cost per vector, so
// pieces under kBufferedPieceBytes on average go faster copied into one buffer by the ranks in
// parallel, while the previous buffer is written; larger ones go straight from the ranks'
// memory, one pwritev per extent.
inline constexpr std::size_t kBufferedPieceBytes = std::size_t{16} << 10;

// A collective write of `sources` through collective buffers, or nullptr when its pieces are
// large enough to go straight from memory.
std::shared_ptr<BufferedWrite> plan_buffered(const File& file,
                                             const std::vector<std::span<const Piece>>& sources) {
  std::size_t pieces = 0, bytes = 0;
  for (std::span<const Piece> source : sources) {
    pieces += source.size();
    for (const Piece& piece : source) bytes += piece.length;
  }
  if (pieces == 0 || bytes / pieces >= kBufferedPieceBytes) return nullptr;
  return std::make_shared<BufferedWrite>(file.fd, sources, buffer_geometry(file));
}

struct Buffered {
  std::vector<Side*> sides;
  std::shared_ptr<BufferedWrite> write;
  int writer = 0;  // the slot that writes the windows
};

std::shared_ptr<Buffered> plan_buffered(const File& file, Meeting& meeting, int writer) {
  auto buffered = std::make_shared<Buffered>();
  buffered->sides = sides_of(meeting);
  std::size_t pieces = 0, bytes = 0;
  for (const Side* side : buffered->sides) {
    pieces += side->count;
    bytes += side->bytes;
  }
  if (pieces == 0 || bytes / pieces >= kBufferedPieceBytes) return nullptr;
  // In rank order: where ranks' pieces overlap, the highest rank's bytes are written.
  std::vector<std::span<const Piece>> sources;
  std::vector<Shape> shapes;
  std::vector<const PieceSource*> makers;
  for (const Side* side : buffered->sides) {
    sources.emplace_back(*side->pieces);
    shapes.push_back(side->shape);
    makers.push_back(side->deferred);
  }
  buffered->write =
      std::make_shared<BufferedWrite>(file.fd, sources, buffer_geometry(file), shapes, makers);
  buffered->writer = writer;
  return buffered;
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

bool defers_pieces(const File& file, bool write) {
  if (!write || file.comm->spans_processes || !collective_buffering(file, write)) return false;
  // One aggregator for the process (the only case that goes window by window): every core that
  // may run a rank on one NUMA node.
  const Scheduler* scheduler = Scheduler::current();
  if (scheduler == nullptr || this_thread::vp() < 0) return false;
  for (int vp = 1; vp < scheduler->num_vps(); ++vp) {
    if (scheduler->vp_numa(vp) != scheduler->vp_numa(0)) return false;
  }
  return true;
}

long long collective_transfer(File& file, std::uint64_t call, const Access& access, bool write,
                              int& error) {
  const std::vector<Piece>& pieces = access.pieces;
  const std::vector<int>& ranks = local_ranks(file);
  const int size = static_cast<int>(ranks.size());
  const auto slot =
      static_cast<int>(std::find(ranks.begin(), ranks.end(), file.rank) - ranks.begin());
  std::shared_ptr<Meeting> meeting =
      file.comm->meetings.join<Meeting>(kFileCalls | call, call, size, "a collective file access",
                                        [size] { return std::make_shared<Meeting>(size); });
  Side side;
  side.pieces = &pieces;
  side.count = pieces.size();
  const bool spans = file.comm->spans_processes;
  const bool buffering = collective_buffering(file, write);
  const std::optional<Deferred> deferred =
      access.deferred ? std::optional<Deferred>(std::in_place, file.view, access) : std::nullopt;
  if (deferred) {
    // Its range only: the plans make its pieces window by window once the ranks have met.
    side.deferred = &*deferred;
    side.count = estimated_pieces(file.view, access);
    side.shape = {access.low, access.high, access.bytes, true};
    side.bytes = access.bytes;
  } else if (buffering && !spans && write) {
    // One pass over the pieces before the meeting, which waits for the last rank's.
    side.shape = shape_of(pieces);
    side.bytes = side.shape.bytes;
  } else {
    for (const Piece& piece : pieces) side.bytes += piece.length;
  }
  if (!buffering) {
    // Each rank moves its own pieces; the meeting only orders the ranks.
    side.moved = transfer_managed(file, pieces, write);
    side.error = side.moved < 0 ? errno : 0;
    meeting->publish(slot, &side);
    meeting->phase();
    if (spans && slot == 0) meet_processes(file, call);
  } else if (!spans) {
    side.group = aggregation_group(write);
    meeting->publish(slot, &side);
    // One of the two, or neither when the last rank to arrive moved everything at once.
    struct Plan {
      std::shared_ptr<Domains> domains;
      std::shared_ptr<Buffered> buffered;
    };
    meeting->phase([&] {
      auto plan = std::make_shared<Plan>();
      plan->domains = plan_domains(*meeting);
      if (plan->domains != nullptr && write) {
        for (const std::vector<Piece>& domain : plan->domains->pieces) {
          plan->domains->buffered.push_back(plan_buffered(file, {std::span<const Piece>(domain)}));
        }
      }
      if (plan->domains == nullptr && write) {
        // The last rank to arrive builds the plan and writes it: it claims the writer's core
        // before any other rank sees the plan.
        plan->buffered = plan_buffered(file, *meeting, slot);
        if (plan->buffered != nullptr) plan->buffered->write->claim_writer();
      }
      if (plan->domains == nullptr && plan->buffered == nullptr) aggregate(file, *meeting, write);
      meeting->shared = plan;
    });
    const auto* plan = static_cast<const Plan*>(meeting->shared.get());
    if (Buffered* b = plan->buffered.get(); b != nullptr) {
      // Every rank of the process copies pieces into the collective buffers; the last to arrive
      // writes them.
      b->write->run(b->writer == slot);
      meeting->phase([&] { finish(b->sides, b->write->error(), 0, true); });
    } else if (Domains* d = plan->domains.get(); d != nullptr) {
      for (std::size_t k = 0; k < d->pieces.size(); ++k) {
        const bool aggregator = d->aggregator[k] == slot;
        const int node = d->sides[static_cast<std::size_t>(d->aggregator[k])]->group;
        if (k < d->buffered.size() && d->buffered[k] != nullptr) {
          if (d->sides[static_cast<std::size_t>(slot)]->group != node) continue;
          d->buffered[k]->run(aggregator);
          if (aggregator) d->errors[k] = d->buffered[k]->error();
        } else if (aggregator) {
          d->errors[k] = move(file.fd, d->pieces[k], write) < 0 ? errno : 0;
        }
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
    // The head exchanges the data of the file domains with the other heads; then the ranks of
    // the process copy its domain's pieces into its collective buffers while it writes them.
    std::vector<Side*> sides;
    std::vector<Piece> all;
    MPI_Offset end = 0;
    int rc = 0;
    bool met = false;
    auto write_domain = [&](const std::vector<std::span<const Piece>>& by_process) {
      auto buffered = plan_buffered(file, by_process);
      if (buffered != nullptr) buffered->claim_writer();
      meeting->shared = buffered;
      meeting->phase();
      met = true;
      if (buffered == nullptr) {
        std::vector<Piece> domain;
        for (std::span<const Piece> pieces_of : by_process) {
          domain.insert(domain.end(), pieces_of.begin(), pieces_of.end());
        }
        std::stable_sort(domain.begin(), domain.end(),
                         [](const Piece& a, const Piece& b) { return a.file < b.file; });
        return move(file.fd, domain, true) < 0 ? errno : 0;
      }
      buffered->run(true);
      return buffered->error();
    };
    if (slot == 0) {
      sides = gather(*meeting, all);
      rc = two_phase(file, call, all, write, write_domain, end);
    }
    if (!met) meeting->phase();
    if (slot != 0) {
      if (auto* b = static_cast<BufferedWrite*>(meeting->shared.get()); b != nullptr) b->run(false);
    }
    if (slot == 0) finish(sides, rc, end, write);
  }
  // Every rank of the process waits for its head (and so for the other processes).
  if (spans) meeting->phase();
  error = side.error;
  return side.moved;
}

}  // namespace weft::mpi::io
