// Writing a trace file, and reading one back into a summary: how busy each core was, and how long
// each rank spent in MPI, running or parked.
#include <algorithm>
#include <map>
#include <utility>

#include "trace_write.h"
#include "weft/error.h"

namespace weft::trace {

void write(const std::vector<ProcessTrace>& processes, const std::string& path, Format format) {
  if (format == Format::raw) {
    if (processes.size() != 1) throw Error("a raw trace holds one process");
    write_raw(processes.front(), path);
    return;
  }
  const Timeline timeline = build_timeline(processes);
  if (format == Format::json) {
    write_json(timeline, path);
  } else {
    write_otf2(timeline, path);
  }
}

Summary summarize(const std::string& path) {
  const Timeline timeline = path.ends_with(".otf2") ? read_otf2(path) : read_json(path);
  Summary summary;
  summary.length_s = static_cast<double>(timeline.length_ns) * 1e-9;
  struct Thread {
    int process = 0;
    int rank = -1;
    std::uint64_t first = UINT64_MAX, last = 0, running = 0, mpi_running = 0, mpi_parked = 0;
    std::uint64_t parked_in_mpi_since = 0;  // nonzero: left a core inside an MPI call
  };
  std::map<std::pair<int, std::uint64_t>, Thread> threads;
  for (const Track& track : timeline.tracks) {
    CoreUse use;
    use.process_name = static_cast<std::size_t>(track.process) < timeline.process_names.size()
                           ? timeline.process_names[static_cast<std::size_t>(track.process)]
                           : "process " + std::to_string(track.process);
    use.track = track.name;
    // The open slices of the track: the thread's and its spans, innermost last.
    struct Open {
      std::uint64_t time;
      const Op* op;
    };
    std::vector<Open> open;
    std::uint64_t busy = 0;
    // An outermost MPI span just left: when its thread's slice ends at the same time, the thread
    // left the core inside the call (it parked).
    bool mpi_just_left = false;
    for (const Op& op : track.ops) {
      const bool left_mpi = std::exchange(mpi_just_left, false);
      if (op.kind == Op::Kind::enter) {
        if (op.category == kThreadCategory) {
          Thread& thread = threads[{track.process, op.thread}];
          thread.process = track.process;
          thread.rank = op.rank;
          thread.first = std::min(thread.first, op.time);
          if (thread.parked_in_mpi_since != 0 && op.time >= thread.parked_in_mpi_since) {
            thread.mpi_parked += op.time - thread.parked_in_mpi_since;
            thread.parked_in_mpi_since = 0;
          }
        }
        open.push_back({op.time, &op});
      } else if (op.kind == Op::Kind::leave && !open.empty()) {
        const Open top = open.back();
        open.pop_back();
        const std::uint64_t length = op.time - top.time;
        if (top.op->category == kThreadCategory) {
          busy += length;
          Thread& thread = threads[{track.process, top.op->thread}];
          thread.running += length;
          thread.last = std::max(thread.last, op.time);
          if (left_mpi) thread.parked_in_mpi_since = op.time;
        } else if (top.op->category == static_cast<std::uint8_t>(Category::mpi)) {
          // Only the outermost MPI span counts (a call made inside another, e.g. by a
          // collective, is already inside it).
          const bool outermost = std::none_of(open.begin(), open.end(), [](const Open& o) {
            return o.op->category == static_cast<std::uint8_t>(Category::mpi);
          });
          if (outermost && !open.empty() && open.front().op->category == kThreadCategory) {
            Thread& thread = threads[{track.process, open.front().op->thread}];
            thread.mpi_running += length;
            mpi_just_left = true;
          }
        }
      }
    }
    use.busy_s = static_cast<double>(busy) * 1e-9;
    use.utilization =
        timeline.length_ns > 0
            ? std::min(1.0, static_cast<double>(busy) / static_cast<double>(timeline.length_ns))
            : 0;
    summary.cores.push_back(use);
  }
  for (const auto& [key, thread] : threads) {
    if (thread.rank < 0 || thread.first == UINT64_MAX) continue;
    RankTime time;
    time.process = thread.process;
    time.rank = thread.rank;
    time.run_s = static_cast<double>(thread.last - thread.first) * 1e-9;
    time.running_s = static_cast<double>(thread.running) * 1e-9;
    time.mpi_wait_s = static_cast<double>(thread.mpi_parked) * 1e-9;
    time.mpi_s = static_cast<double>(thread.mpi_running) * 1e-9 + time.mpi_wait_s;
    summary.ranks.push_back(time);
  }
  std::sort(summary.ranks.begin(), summary.ranks.end(), [](const RankTime& a, const RankTime& b) {
    return std::pair(a.process, a.rank) < std::pair(b.process, b.rank);
  });
  return summary;
}

}  // namespace weft::trace
