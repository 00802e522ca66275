#include <algorithm>
#include <map>
#include <unordered_map>

#include "trace_write.h"
#include "weft/error.h"
#include "weft/thread_type.h"

namespace weft::trace {
namespace {

struct OpenSpan {
  const std::string* name;
  std::uint8_t category;
  std::int64_t arg;
  std::uint64_t id;
};

struct ThreadState {
  std::vector<OpenSpan> spans;  // what the thread has open, outermost first
  const std::string* name = nullptr;
  int rank = -1;
  std::uint64_t wake_flow = 0;  // a wake-up to draw into its next slice
};

// What one track has entered and not left, innermost last.
struct Entered {
  std::uint64_t id;  // span id, or 0 for the thread's slice
};

// "rank 3" for an MPI rank; "omp_worker #17 (rank 3)" for another thread working for rank 3.
std::string thread_name(std::uint64_t id, int type, int rank) {
  if (type == static_cast<int>(ThreadType::mpi_task) && rank >= 0) {
    return "rank " + std::to_string(rank);
  }
  const auto name = type >= 0 && type <= static_cast<int>(ThreadType::user)
                        ? std::string(to_string(static_cast<ThreadType>(type)))
                        : std::string("thread");
  return name + " #" + std::to_string(id) +
         (rank >= 0 ? " (rank " + std::to_string(rank) + ")" : std::string());
}

}  // namespace

const std::string* Timeline::intern(const std::string& text) {
  auto [it, added] = index.emplace(text, nullptr);
  if (added) {
    names.push_back(text);
    it->second = &names.back();
  }
  return it->second;
}

Timeline build_timeline(const std::vector<ProcessTrace>& processes) {
  Timeline timeline;
  if (processes.empty()) throw Error("no trace to write");
  // Clock alignment: processes that share a boot share CLOCK_MONOTONIC; others are brought onto
  // the first one's clock through their realtime offsets.
  const ProcessTrace& first = processes.front();
  std::vector<std::int64_t> offsets;
  std::uint64_t start = UINT64_MAX, end = 0;
  for (const ProcessTrace& process : processes) {
    const std::int64_t offset =
        process.boot_id == first.boot_id && process.host == first.host
            ? 0
            : process.realtime_minus_monotonic - first.realtime_minus_monotonic;
    offsets.push_back(offset);
    start = std::min(start, process.start_ns + static_cast<std::uint64_t>(offset));
  }
  // A track whose buffer overwrote its oldest events is complete from its first event kept on:
  // the trace starts there, where every track is.
  std::uint64_t complete_from = 0;
  for (std::size_t p = 0; p < processes.size(); ++p) {
    for (const Location& location : processes[p].locations) {
      if (location.dropped > 0 && !location.events.empty()) {
        complete_from = std::max(
            complete_from, location.events.front().time + static_cast<std::uint64_t>(offsets[p]));
      }
    }
  }
  start = std::max(start, complete_from);
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const ProcessTrace& process = processes[p];
    const std::int64_t offset = offsets[p];
    end = std::max(end, process.end_ns + static_cast<std::uint64_t>(offset));
  }
  timeline.length_ns = end - start;
  const std::string* wake_name = timeline.intern("wake");
  const std::string* message_name = timeline.intern("message");
  std::uint64_t next_id = 1;

  for (std::size_t p = 0; p < processes.size(); ++p) {
    const ProcessTrace& process = processes[p];
    for (const Communicator& comm : process.communicators) {
      timeline.communicators.emplace(comm.id, comm);
    }
    timeline.process_names.push_back("process " + std::to_string(process.process) + " (pid " +
                                     std::to_string(process.pid) + ", " + process.host + ")");
    std::vector<const std::string*> strings;
    for (const std::string& text : process.strings) strings.push_back(timeline.intern(text));
    auto time_of = [&](const Event& e) {
      return e.time + static_cast<std::uint64_t>(offsets[p]) - start;
    };

    // Every event of the process in time order (stable: a track's own order is kept).
    struct Ref {
      std::uint64_t time;
      std::uint32_t location;
      std::uint32_t index;
    };
    std::vector<Ref> order;
    for (std::uint32_t l = 0; l < process.locations.size(); ++l) {
      for (std::uint32_t i = 0; i < process.locations[l].events.size(); ++i) {
        const Event& event = process.locations[l].events[i];
        if (event.time + static_cast<std::uint64_t>(offsets[p]) < start) continue;
        order.push_back({time_of(event), l, i});
      }
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const Ref& x, const Ref& y) { return x.time < y.time; });

    const std::size_t first_track = timeline.tracks.size();
    for (const Location& location : process.locations) {
      Track track;
      track.process = process.process;
      track.tid = location.vp >= 0 ? location.vp
                                   : 1000 + static_cast<int>(timeline.tracks.size() - first_track);
      track.name = location.vp >= 0 ? location.name + " (core " + std::to_string(location.core) +
                                          ", NUMA " + std::to_string(location.numa) + ")"
                                    : location.name;
      if (location.dropped > 0) {
        track.name += ", " + std::to_string(location.dropped) + " oldest events overwritten";
      }
      timeline.tracks.push_back(std::move(track));
    }

    std::unordered_map<std::uint64_t, ThreadState> threads;
    std::vector<std::uint64_t> current(process.locations.size(), 0);
    std::vector<std::vector<Entered>> entered(process.locations.size());
    // A track's own pseudo-thread for what it records while no user thread runs.
    auto key_of = [&](std::uint32_t l) {
      return current[l] != 0 ? current[l] : (std::uint64_t{1} << 62 | l);
    };
    auto leave_top = [&](std::uint32_t l, std::uint64_t time) {
      Track& track = timeline.tracks[first_track + l];
      const Entered top = entered[l].back();
      entered[l].pop_back();
      Op op;
      op.kind = Op::Kind::leave;
      op.time = time;
      op.id = top.id;
      track.ops.push_back(op);
    };
    auto enter = [&](std::uint32_t l, std::uint64_t time, const OpenSpan& span,
                     const ThreadState& thread, std::uint64_t thread_id) {
      Op op;
      op.kind = Op::Kind::enter;
      op.time = time;
      op.name = span.name;
      op.category = span.category;
      op.arg = span.arg;
      op.id = span.id;
      op.thread = thread_id;
      op.rank = thread.rank;
      timeline.tracks[first_track + l].ops.push_back(op);
      entered[l].push_back({span.id});
    };
    auto switch_out = [&](std::uint32_t l, std::uint64_t time) {
      while (!entered[l].empty()) leave_top(l, time);
      current[l] = 0;
    };
    auto switch_in = [&](std::uint32_t l, std::uint64_t time, std::uint64_t id) {
      ThreadState& thread = threads[id];
      current[l] = id;
      enter(l, time, {thread.name, kThreadCategory, 0, 0}, thread, id);
      if (thread.wake_flow != 0) {
        Op op;
        op.kind = Op::Kind::flow_in;
        op.time = time;
        op.name = wake_name;
        op.category = static_cast<std::uint8_t>(Category::sched);
        op.id = thread.wake_flow;
        timeline.tracks[first_track + l].ops.push_back(op);
        thread.wake_flow = 0;
      }
      for (const OpenSpan& span : thread.spans) enter(l, time, span, thread, id);
    };

    for (const Ref& ref : order) {
      const Event& e = process.locations[ref.location].events[ref.index];
      const std::uint32_t l = ref.location;
      Track& track = timeline.tracks[first_track + l];
      switch (e.kind) {
        case EventKind::thread_switch: {
          switch_out(l, ref.time);
          if (e.b != 0) {
            ThreadState& thread = threads[e.b];
            const int type = e.d & 0xff;
            const int rank = static_cast<std::int32_t>(e.c);
            if (thread.name == nullptr) {
              // Only an MPI rank's own thread counts as the rank (trace-summary's MPI times).
              thread.rank = type == static_cast<int>(ThreadType::mpi_task) ? rank : -1;
              thread.name = timeline.intern(thread_name(e.b, type, rank));
            }
            switch_in(l, ref.time, e.b);
          }
          if (static_cast<SwitchReason>(e.category) == SwitchReason::exit) threads.erase(e.a);
          break;
        }
        case EventKind::begin: {
          ThreadState& thread = threads[key_of(l)];
          OpenSpan span{strings[e.a], e.category, static_cast<std::int64_t>(e.b), next_id++};
          thread.spans.push_back(span);
          enter(l, ref.time, span, thread, current[l]);
          break;
        }
        case EventKind::end: {
          ThreadState& thread = threads[key_of(l)];
          // The innermost open span of that name; an end without its begin (recorded before the
          // trace started) is dropped.
          auto it = std::find_if(thread.spans.rbegin(), thread.spans.rend(),
                                 [&](const OpenSpan& s) { return s.name == strings[e.a]; });
          if (it == thread.spans.rend()) break;
          const std::uint64_t id = it->id;
          thread.spans.erase(std::next(it).base(), thread.spans.end());
          auto on_track = std::find_if(entered[l].begin(), entered[l].end(),
                                       [&](const Entered& x) { return x.id == id; });
          if (on_track != entered[l].end()) {
            while (entered[l].size() > static_cast<std::size_t>(on_track - entered[l].begin())) {
              leave_top(l, ref.time);
            }
          }
          break;
        }
        case EventKind::instant: {
          Op op;
          op.kind = Op::Kind::instant;
          op.time = ref.time;
          op.name = strings[e.a];
          op.category = e.category;
          op.arg = static_cast<std::int64_t>(e.b);
          op.thread = current[l];
          track.ops.push_back(op);
          break;
        }
        case EventKind::wake: {
          const std::uint64_t flow = (static_cast<std::uint64_t>(p) << 48) | next_id++;
          threads[e.a].wake_flow = flow;
          Op op;
          op.kind = Op::Kind::flow_out;
          op.time = ref.time;
          op.name = wake_name;
          op.category = static_cast<std::uint8_t>(Category::sched);
          op.arg = static_cast<std::int64_t>(e.a);
          op.thread = current[l];
          op.id = flow;
          track.ops.push_back(op);
          break;
        }
        case EventKind::sent:
        case EventKind::matched: {
          Op op;
          op.kind = e.kind == EventKind::sent ? Op::Kind::flow_out : Op::Kind::flow_in;
          op.time = ref.time;
          op.name = message_name;
          op.category = static_cast<std::uint8_t>(Category::message);
          op.arg = static_cast<std::int32_t>(e.c);
          op.thread = current[l];
          op.rank = current[l] != 0 ? threads[current[l]].rank : -1;
          op.id = e.a;
          op.tag = message_tag(e);
          op.bytes = message_bytes(e);
          op.comm = e.d;
          track.ops.push_back(op);
          break;
        }
      }
    }
    const std::uint64_t last = process.end_ns + static_cast<std::uint64_t>(offsets[p]) - start;
    for (std::uint32_t l = 0; l < process.locations.size(); ++l) {
      std::uint64_t at = last;
      if (!timeline.tracks[first_track + l].ops.empty()) {
        at = std::max(at, timeline.tracks[first_track + l].ops.back().time);
      }
      switch_out(l, at);
    }
  }
  // A flow drawn needs both of its ends; a message whose other end was not recorded (sent before
  // the trace began, received after it ended) is left out.
  std::map<std::uint64_t, int> ends;
  for (const Track& track : timeline.tracks) {
    for (const Op& op : track.ops) {
      if (op.kind == Op::Kind::flow_out) ends[op.id] |= 1;
      if (op.kind == Op::Kind::flow_in) ends[op.id] |= 2;
    }
  }
  for (Track& track : timeline.tracks) {
    std::erase_if(track.ops, [&](const Op& op) {
      return (op.kind == Op::Kind::flow_out || op.kind == Op::Kind::flow_in) && ends[op.id] != 3;
    });
  }
  return timeline;
}

}  // namespace weft::trace
