// The manager's statistics: read by weft::io::stats() and printed at exit with io.stats=true.
#include <cstdio>

#include "manager.h"

namespace weft::io::detail {

namespace {

std::uint64_t mean(std::uint64_t total, std::uint64_t count) {
  return count == 0 ? 0 : total / count;
}

const char* name(Mode mode) {
  switch (mode) {
    case Mode::poll:
      return "poll";
    case Mode::block:
      return "block";
    case Mode::automatic:
      break;
  }
  return "auto";
}

}  // namespace

Stats Manager::stats() const {
  // Relaxed: each counter is a figure of its own; a snapshot need not be consistent across them.
  auto get = [](const std::atomic<std::uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  Stats s;
  s.mode = mode_;
  s.polls = get(counters_.polls);
  s.poll_detections = get(counters_.poll_detections);
  s.blocks = get(counters_.blocks);
  s.block_detections = get(counters_.block_detections);
  s.handoffs = get(counters_.handoffs);
  s.wakeups = get(counters_.wakeups);
  s.mean_poll_gap_ns = mean(get(counters_.poll_gap_ns), get(counters_.poll_gaps));
  s.mean_wakeup_ns = mean(get(counters_.wakeup_ns), s.wakeups);
  return s;
}

void Manager::print_stats() const {
  const Stats s = stats();
  std::fprintf(
      stderr,
      "weft: io.mode %s: io.polls %llu, io.poll_detections %llu, io.blocks %llu, "
      "io.block_detections %llu, io.handoffs %llu, io.wakeups %llu, "
      "io.mean_poll_gap_us %.1f, io.mean_wakeup_us %.1f\n",
      name(s.mode), static_cast<unsigned long long>(s.polls),
      static_cast<unsigned long long>(s.poll_detections), static_cast<unsigned long long>(s.blocks),
      static_cast<unsigned long long>(s.block_detections),
      static_cast<unsigned long long>(s.handoffs), static_cast<unsigned long long>(s.wakeups),
      s.mean_poll_gap_ns / 1000.0, s.mean_wakeup_ns / 1000.0);
}

}  // namespace weft::io::detail
