// The manager's statistics: counted in a shared-memory file that weft-info reads from another
// process, returned by weft::io::stats(), printed at exit with io.stats=true.
#include "stats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "manager.h"

namespace weft::io::detail {

namespace {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the counters are shared between processes without a lock");

constexpr const char* kPrefix = "weft-io.";

// Appended piece by piece: GCC 12 at -O3 takes `"/" + std::string(...) + ...` for an overlapping
// copy and warns (-Wrestrict) falsely.
std::string shm_name(int pid) {
  std::string name = "/";
  name += kPrefix;
  name += std::to_string(pid);
  return name;
}

// Field 22 of /proc/<pid>/stat (clock ticks from boot to the process's start), 0 when unknown.
// The command name (field 2) may hold spaces and parentheses: fields are counted after its last
// ')'.
std::uint64_t start_ticks(int pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) return 0;
  char line[1024];
  const std::size_t length = std::fread(line, 1, sizeof line - 1, file);
  std::fclose(file);
  line[length] = '\0';
  const char* field = std::strrchr(line, ')');
  if (field == nullptr) return 0;
  // After ')' come field 3 (state) onwards: skip 19 fields to reach field 22.
  for (int skipped = 0; skipped < 20 && field != nullptr; ++skipped)
    field = std::strchr(field + 1, ' ');
  return field != nullptr ? std::strtoull(field + 1, nullptr, 10) : 0;
}

// The published file of a process, mapped read-only: null when there is none, or when it is
// shorter than the counters (its publisher is still making it: reading past its end would raise
// SIGBUS).
class MappedCounters {
 public:
  explicit MappedCounters(int pid) {
    const int fd = ::shm_open(shm_name(pid).c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return;
    struct stat status {};
    if (::fstat(fd, &status) == 0 && status.st_size >= static_cast<off_t>(sizeof(Counters))) {
      void* memory = ::mmap(nullptr, sizeof(Counters), PROT_READ, MAP_SHARED, fd, 0);
      if (memory != MAP_FAILED) counters_ = static_cast<const Counters*>(memory);
    }
    ::close(fd);
  }
  ~MappedCounters() {
    if (counters_ != nullptr) ::munmap(const_cast<Counters*>(counters_), sizeof(Counters));
  }
  MappedCounters(const MappedCounters&) = delete;
  MappedCounters& operator=(const MappedCounters&) = delete;

  // The counters once their publisher has initialised them, else null.
  const Counters* published() const noexcept {
    // acquire: pairs with the publisher's release of the magic word.
    return counters_ != nullptr &&
                   counters_->magic.load(std::memory_order_acquire) == Counters::kMagic
               ? counters_
               : nullptr;
  }

 private:
  const Counters* counters_ = nullptr;
};

// True when the file of `pid` was left by a process that is gone: no process has the pid, or the
// one that has it started after the file's publisher. A file whose publisher has not written its
// magic word yet is not judged.
bool left_by_dead_process(int pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  const MappedCounters file(pid);
  const Counters* counters = file.published();
  return counters != nullptr &&
         counters->start_ticks.load(std::memory_order_relaxed) != start_ticks(pid);
}

// Removes the files of processes killed before their shutdown, which nothing else removes (on
// the shared development machine hundreds had piled up from killed test runs). Files of other
// users' processes stay: their pids answer EPERM, and unlinking them would fail anyway.
void remove_stale_files() {
  DIR* directory = ::opendir("/dev/shm");
  if (directory == nullptr) return;
  const std::string prefix = kPrefix;
  const int self = ::getpid();
  std::vector<int> stale;
  while (const dirent* entry = ::readdir(directory)) {
    const std::string file = entry->d_name;
    if (file.rfind(prefix, 0) != 0) continue;
    const int pid = std::atoi(file.c_str() + prefix.size());
    if (pid > 0 && pid != self && left_by_dead_process(pid)) stale.push_back(pid);
  }
  ::closedir(directory);
  for (int pid : stale) ::shm_unlink(shm_name(pid).c_str());
}

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

Stats Counters::summary() const noexcept {
  // Relaxed: each counter is a figure of its own; a snapshot need not be consistent across them.
  auto get = [](const std::atomic<std::uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  Stats s;
  s.mode = static_cast<Mode>(get(mode));
  s.polls = get(polls);
  s.poll_detections = get(poll_detections);
  s.blocks = get(blocks);
  s.block_detections = get(block_detections);
  s.handoffs = get(handoffs);
  s.wakeups = get(wakeups);
  s.mean_poll_gap_ns = mean(get(poll_gap_ns), get(poll_gaps));
  s.mean_wakeup_ns = mean(get(wakeup_ns), s.wakeups);
  s.spare_calls = get(spare_calls);
  s.spare_full = get(spare_full);
  s.poll_sleeps = get(poll_sleeps);
  s.poll_sleep_detections = get(poll_sleep_detections);
  s.ready_rereads = get(ready_rereads);
  return s;
}

PublishedCounters::PublishedCounters(Mode mode) {
  remove_stale_files();
  // One file per process: a second scheduler of the process (after the first shut down) takes
  // the name over.
  const std::string name = shm_name(::getpid());
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    void* memory =
        ::ftruncate(fd, sizeof(Counters)) == 0
            ? ::mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            : MAP_FAILED;
    ::close(fd);
    if (memory != MAP_FAILED) {
      counters_ = new (memory) Counters;
      shared_ = true;
    } else {
      ::shm_unlink(name.c_str());
    }
  }
  // Without /dev/shm the statistics stay readable in this process only.
  counters_->mode.store(static_cast<std::uint64_t>(mode), std::memory_order_relaxed);
  counters_->start_ticks.store(start_ticks(::getpid()), std::memory_order_relaxed);
  // release: a reader that sees the magic word sees an initialised file.
  counters_->magic.store(Counters::kMagic, std::memory_order_release);
}

PublishedCounters::~PublishedCounters() {
  if (!shared_) return;
  ::munmap(counters_, sizeof(Counters));
  ::shm_unlink(shm_name(::getpid()).c_str());
}

Stats Manager::stats() const {
  return counters_->summary();
}

void Manager::print_stats() const {
  const Stats s = stats();
  std::fprintf(
      stderr,
      "weft: io.mode %s: io.polls %llu, io.poll_detections %llu, io.blocks %llu, "
      "io.block_detections %llu, io.handoffs %llu, io.wakeups %llu, "
      "io.mean_poll_gap_us %.1f, io.mean_wakeup_us %.1f, io.spare_calls %llu, "
      "io.spare_full %llu, io.poll_sleeps %llu, io.poll_sleep_detections %llu, "
      "io.ready_rereads %llu\n",
      name(s.mode), static_cast<unsigned long long>(s.polls),
      static_cast<unsigned long long>(s.poll_detections), static_cast<unsigned long long>(s.blocks),
      static_cast<unsigned long long>(s.block_detections),
      static_cast<unsigned long long>(s.handoffs), static_cast<unsigned long long>(s.wakeups),
      s.mean_poll_gap_ns / 1000.0, s.mean_wakeup_ns / 1000.0,
      static_cast<unsigned long long>(s.spare_calls), static_cast<unsigned long long>(s.spare_full),
      static_cast<unsigned long long>(s.poll_sleeps),
      static_cast<unsigned long long>(s.poll_sleep_detections),
      static_cast<unsigned long long>(s.ready_rereads));
}

}  // namespace weft::io::detail

namespace weft::io {

std::optional<Stats> stats_of_process(int pid) {
  // A file left by a process that died is not a running job.
  if (pid <= 0 || ::kill(pid, 0) != 0) return std::nullopt;
  const detail::MappedCounters file(pid);
  const detail::Counters* counters = file.published();
  if (counters == nullptr ||
      counters->start_ticks.load(std::memory_order_relaxed) != detail::start_ticks(pid)) {
    return std::nullopt;
  }
  return counters->summary();
}

std::vector<int> processes_with_stats() {
  std::vector<int> pids;
  DIR* directory = ::opendir("/dev/shm");
  if (directory == nullptr) return pids;
  const std::string prefix = detail::kPrefix;
  while (const dirent* entry = ::readdir(directory)) {
    const std::string file = entry->d_name;
    if (file.rfind(prefix, 0) != 0) continue;
    const int pid = std::atoi(file.c_str() + prefix.size());
    if (stats_of_process(pid)) pids.push_back(pid);
  }
  ::closedir(directory);
  return pids;
}

void remove_stats_of_ended_process(int pid) {
  if (pid > 0) ::shm_unlink(detail::shm_name(pid).c_str());
}

}  // namespace weft::io
