// The manager's counters, kept in a small shared-memory file (/dev/shm/weft-io.<pid>) so that
// weft-info can read the statistics of a running job from another process.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

#include "weft/io.h"

namespace weft::io::detail {

// The file's layout. Plain lock-free atomics, so writer and reader need no lock across processes;
// every counter is a figure of its own, read relaxed.
struct Counters {
  static constexpr std::uint64_t kMagic = 0x77656674696f3036;  // "weftio06"
  std::atomic<std::uint64_t> magic{0};
  std::atomic<std::uint64_t> mode{0};
  // The publisher's start time (field 22 of /proc/<pid>/stat): a file left by a process that died
  // is not taken for the statistics of a later process that got the same pid.
  std::atomic<std::uint64_t> start_ticks{0};
  std::atomic<std::uint64_t> polls{0};
  std::atomic<std::uint64_t> poll_detections{0};
  std::atomic<std::uint64_t> blocks{0};
  std::atomic<std::uint64_t> block_detections{0};
  std::atomic<std::uint64_t> handoffs{0};
  std::atomic<std::uint64_t> wakeups{0};
  std::atomic<std::uint64_t> poll_gap_ns{0};
  std::atomic<std::uint64_t> poll_gaps{0};
  std::atomic<std::uint64_t> wakeup_ns{0};
  std::atomic<std::uint64_t> spare_calls{0};
  std::atomic<std::uint64_t> spare_full{0};
  std::atomic<std::uint64_t> poll_sleeps{0};
  std::atomic<std::uint64_t> poll_sleep_detections{0};
  std::atomic<std::uint64_t> ready_rereads{0};

  Stats summary() const noexcept;
};

// The counters of this process, in the shared file when it could be made (else in memory);
// the file is removed with the object.
class PublishedCounters {
 public:
  explicit PublishedCounters(Mode mode);
  ~PublishedCounters();
  PublishedCounters(const PublishedCounters&) = delete;
  PublishedCounters& operator=(const PublishedCounters&) = delete;

  Counters& operator*() const noexcept { return *counters_; }
  Counters* operator->() const noexcept { return counters_; }

 private:
  Counters local_;
  Counters* counters_ = &local_;
  bool shared_ = false;
};

}  // namespace weft::io::detail
