#include "diagnostics/wait_graph.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "comm/communicator.h"
#include "diagnostics/blocked_call.h"
#include "init/world.h"
#include "request/request.h"

namespace weft::mpi {

namespace {

void add_peer(RankRecord& record, MPI_Comm comm, int peer, int tag, int rank) {
  if (comm == MPI_COMM_NULL || peer == MPI_PROC_NULL) return;
  if (peer == MPI_ANY_SOURCE) {
    for (int member : comm->inter != nullptr ? comm->inter->remote : comm->members) {
      if (member != rank) record.any_of.push_back(member);
    }
    record.any_text = (tag == MPI_ANY_TAG ? std::string("any tag") : "tag " + std::to_string(tag)) +
                      " on " + comm_name(comm, rank);
    return;
  }
  record.waits_for.push_back(comm->world_rank(peer));
}

void add_call(RankRecord& record, const BlockedCall& call, int rank,
              std::map<std::uint32_t, MPI_Comm>& comms) {
  if (!record.calls.empty()) record.calls += "; ";
  record.calls += describe(call, rank);
  if (call.comm != MPI_COMM_NULL) comms[call.comm->context] = call.comm;
  switch (call.kind) {
    case BlockedCall::Kind::receive:
    case BlockedCall::Kind::probe:
    case BlockedCall::Kind::send:
      add_peer(record, call.comm, call.peer, call.tag, rank);
      break;
    case BlockedCall::Kind::collective:
      if (call.comm->inter == nullptr) {
        record.collective_context = call.comm->context;
        record.collective_number = call.collective;
        record.members = call.comm->members;
      }
      break;
    case BlockedCall::Kind::requests:
      for (int i = 0; i < call.count; ++i) {
        const Request* request = call.requests[i];
        if (request == MPI_REQUEST_NULL || request->completion.done()) continue;
        if (request->comm != MPI_COMM_NULL) comms[request->comm->context] = request->comm;
        if (request->kind == RequestKind::send || request->kind == RequestKind::recv) {
          add_peer(record, request->comm, request->peer, request->tag, rank);
        }
      }
      break;
    case BlockedCall::Kind::named:
      // No edge: what it waits for (a lock's holder, a port's other side) is not known here.
      break;
  }
}

std::string list(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  }
  return text;
}

}  // namespace

Report local_report(World& world, const std::vector<ThreadSnapshot>& threads) {
  Report report;
  std::map<std::uint32_t, MPI_Comm> comms;
  for (int rank = world.first_local(); rank < world.first_local() + world.local_ranks(); ++rank) {
    RankRecord record;
    record.rank = rank;
    bool live = false;
    bool all_noted = true;
    for (const ThreadSnapshot& t : threads) {
      if (t.rank != rank || t.type != ThreadType::mpi_task) continue;
      live = true;
      // Copied while the thread stays in it: the record lives in its frame.
      const std::optional<BlockedCall> call = read_record(t);
      if (!call) {
        all_noted = false;
        continue;
      }
      add_call(record, *call, rank, comms);
    }
    record.state = !live       ? RankRecord::State::ended
                   : all_noted ? RankRecord::State::blocked
                               : RankRecord::State::other;
    report.ranks.push_back(std::move(record));
  }
  for (int rank = world.first_local(); rank < world.first_local() + world.local_ranks(); ++rank) {
    for (const Envelope& envelope : world.rank(rank).engine.unexpected_envelopes()) {
      // A collective context is its communicator's point-to-point context + 1.
      const bool collective = is_collective_context(envelope.context);
      const auto found = comms.find(collective ? envelope.context - 1 : envelope.context);
      std::string line = "to rank " + std::to_string(rank) + " from ";
      if (found != comms.end() && found->second->inter == nullptr) {
        line += "rank " + std::to_string(found->second->world_rank(envelope.source)) + ": ";
      } else {
        line += "comm rank " + std::to_string(envelope.source) + ": ";
      }
      if (collective) {
        line += "collective #" + std::to_string(call_of_tag(envelope.tag)) + " traffic";
      } else {
        line += "tag " + std::to_string(envelope.tag);
      }
      line += ", " + std::to_string(envelope.bytes) + " bytes, on " +
              (found != comms.end() ? comm_name(found->second, rank)
                                    : "communicator " + std::to_string(envelope.context & ~1U));
      report.unmatched.push_back(std::move(line));
    }
  }
  return report;
}

// One record per line: fields separated by tabs, lists by commas (ranks) ; the texts contain
// neither tabs nor newlines.
std::string serialize(const Report& report) {
  std::ostringstream out;
  for (const RankRecord& r : report.ranks) {
    out << "R\t" << r.rank << '\t' << static_cast<char>(r.state) << '\t' << r.collective_context
        << '\t' << r.collective_number << '\t' << list(r.waits_for) << '\t' << list(r.members)
        << '\t' << list(r.any_of) << '\t' << r.any_text << '\t' << r.calls << '\n';
  }
  for (const std::string& line : report.unmatched) out << "U\t" << line << '\n';
  return out.str();
}

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

std::vector<int> ranks_of(const std::string& text) {
  std::vector<int> ranks;
  for (const std::string& part : split(text, ',')) {
    if (!part.empty()) ranks.push_back(std::stoi(part));
  }
  return ranks;
}

}  // namespace

Report deserialize(const std::string& text) {
  Report report;
  for (const std::string& line : split(text, '\n')) {
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() == 2 && f[0] == "U") report.unmatched.push_back(f[1]);
    if (f.size() != 10 || f[0] != "R") continue;
    RankRecord r;
    r.rank = std::stoi(f[1]);
    r.state = static_cast<RankRecord::State>(f[2].empty() ? 'o' : f[2][0]);
    r.collective_context = std::stoll(f[3]);
    r.collective_number = std::stoull(f[4]);
    r.waits_for = ranks_of(f[5]);
    r.members = ranks_of(f[6]);
    r.any_of = ranks_of(f[7]);
    r.any_text = f[8];
    r.calls = f[9];
    report.ranks.push_back(std::move(r));
  }
  return report;
}

std::string render(Report report, bool proven, const std::string& why) {
  std::sort(report.ranks.begin(), report.ranks.end(),
            [](const RankRecord& a, const RankRecord& b) { return a.rank < b.rank; });
  std::map<int, RankRecord*> by_rank;
  for (RankRecord& r : report.ranks) by_rank[r.rank] = &r;
  auto same_collective = [&](const RankRecord& a, int other) {
    const auto found = by_rank.find(other);
    return found != by_rank.end() && found->second->state == RankRecord::State::blocked &&
           found->second->collective_context == a.collective_context &&
           found->second->collective_number == a.collective_number;
  };
  // A collective waits for the members that have not joined its call.
  std::map<int, std::vector<int>> missing;
  for (RankRecord& r : report.ranks) {
    if (r.collective_context < 0) continue;
    for (int member : r.members) {
      if (member != r.rank && !same_collective(r, member)) {
        r.waits_for.push_back(member);
        missing[r.rank].push_back(member);
      }
    }
  }
  std::string text = proven ? "weft: deadlock: every rank waits in MPI and none of the waits can "
                              "complete (proven: " +
                                  why + ")\n"
                            : "weft: possible deadlock (NOT PROVEN: " + why + ")\n";
  text += "wait-for graph:\n";
  for (const RankRecord& r : report.ranks) {
    text += "  rank " + std::to_string(r.rank) + ": ";
    switch (r.state) {
      case RankRecord::State::ended:
        text += "ended (returned from main)\n";
        continue;
      case RankRecord::State::other:
        text += "not in MPI" + (r.calls.empty() ? std::string() : "; " + r.calls) + "\n";
        continue;
      case RankRecord::State::blocked:
        break;
    }
    text += "blocked in " + r.calls;
    if (!r.waits_for.empty()) text += " -> waits for rank " + list(r.waits_for);
    if (!r.any_of.empty()) text += " -> waits for any of ranks " + list(r.any_of);
    text += "\n";
  }
  text += "unmatched sends:";
  if (report.unmatched.empty()) text += " none";
  text += "\n";
  for (const std::string& line : report.unmatched) text += "  " + line + "\n";

  // The first cycle of point-to-point and collective waits, by depth-first search.
  std::map<int, int> color;  // 0 new, 1 on the path, 2 done
  std::vector<int> path;
  std::vector<int> cycle;
  std::function<bool(int)> visit = [&](int rank) {
    color[rank] = 1;
    path.push_back(rank);
    const auto found = by_rank.find(rank);
    if (found != by_rank.end() && found->second->state == RankRecord::State::blocked) {
      for (int next : found->second->waits_for) {
        if (color[next] == 1) {
          cycle.assign(std::find(path.begin(), path.end(), next), path.end());
          cycle.push_back(next);
          return true;
        }
        if (color[next] == 0 && visit(next)) return true;
      }
    }
    path.pop_back();
    color[rank] = 2;
    return false;
  };
  for (const RankRecord& r : report.ranks) {
    if (color[r.rank] == 0 && visit(r.rank)) break;
  }
  if (!cycle.empty()) {
    text += "cycle:";
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      text += (i == 0 ? " rank " : " -> rank ") + std::to_string(cycle[i]);
    }
    text += "\n";
  }
  for (const RankRecord& r : report.ranks) {
    if (r.state != RankRecord::State::blocked) continue;
    std::set<int> named;
    for (int target : r.waits_for) {
      const auto found = by_rank.find(target);
      const bool ended = found == by_rank.end() || found->second->state == RankRecord::State::ended;
      const bool absent = std::find(missing[r.rank].begin(), missing[r.rank].end(), target) !=
                          missing[r.rank].end();
      if (!named.insert(target).second || (!ended && !(absent && cycle.empty()))) continue;
      text += "missing partner: rank " + std::to_string(r.rank) + " waits";
      if (absent) text += " in collective #" + std::to_string(r.collective_number);
      text += " for rank " + std::to_string(target);
      if (ended) {
        text += absent ? ", which has ended without joining it\n" : ", which has ended\n";
      } else {
        text += ", which is blocked in " + found->second->calls + "\n";
      }
    }
    if (!r.any_of.empty()) {
      text += "missing partner: rank " + std::to_string(r.rank) +
              " receives from MPI_ANY_SOURCE (" + r.any_text +
              ") and no rank will send it a message: every other rank is blocked or ended\n";
    }
  }
  return text;
}

}  // namespace weft::mpi
