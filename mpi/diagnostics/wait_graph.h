// The deadlock report: what each rank waits in and for whom, the messages nobody receives, and
// the cycle or missing partner that explains the hang. Each process describes its own ranks
// (RankRecord, from their blocked-in records); the report joins the records of every process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/thread_dump.h"

namespace weft::mpi {

class World;

struct RankRecord {
  int rank = -1;
  enum class State : char { blocked = 'b', ended = 'e', other = 'o' };
  State state = State::other;
  std::string calls;  // "MPI_Recv(source=1, tag=0, comm=MPI_COMM_WORLD)", several joined by "; "
  std::vector<int> waits_for;  // world ranks a point-to-point wait names
  // A blocking collective: its communicator's collective context, call number and members.
  std::int64_t collective_context = -1;
  std::uint64_t collective_number = 0;
  std::vector<int> members;
  // A receive or probe from MPI_ANY_SOURCE: its communicator's members, any of which may send.
  std::vector<int> any_of;
  std::string any_text;  // "tag 5 on MPI_COMM_WORLD"
};

struct Report {
  std::vector<RankRecord> ranks;
  std::vector<std::string> unmatched;  // one line per message no receive has matched
};

// This process's ranks as `threads` (parked, their notes read) show them, and the messages
// waiting in their engines.
Report local_report(World& world, const std::vector<ThreadSnapshot>& threads);

// One line per record and message, for the files processes exchange; and back.
std::string serialize(const Report& report);
Report deserialize(const std::string& text);

// The report's text: the ranks and their calls, the unmatched sends, then the cycle or the
// missing partners. `proven`: quiescence was shown; else the hang outlived deadlock.timeout.
std::string render(Report report, bool proven, const std::string& why);

// The job's exit status after a deadlock report.
inline constexpr int kDeadlockExitStatus = 86;

}  // namespace weft::mpi
