#include "diagnostics/monitor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "diagnostics/blocked_call.h"
#include "diagnostics/wait_graph.h"
#include "init/world.h"
#include "request/completion.h"
#include "transport/transport.h"
#include "weft/mpi_job.h"
#include "weft/thread_dump.h"

namespace weft::mpi {

namespace {

// $TMPDIR/weft-deadlock-<job key>: the processes' published states.
constexpr std::string_view kDirectoryPrefix = "weft-deadlock-";

constexpr int kPeriodMs = 100;

// The write end of the running monitor's wake-up pipe, for the SIGQUIT handler.
std::atomic<int> quit_pipe{-1};
struct sigaction previous_quit;

void on_quit(int) {
  const int fd = quit_pipe.load(std::memory_order_relaxed);
  const char byte = 'q';
  if (fd >= 0) [[maybe_unused]]
    long ignored = ::syscall(SYS_write, fd, &byte, 1);
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    // The system call itself: libweft's write() may try to park a user thread.
    const ssize_t n = ::syscall(SYS_write, fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Replaces `path` with `text` at once: a reader sees the old file or the new one.
void publish_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
  }
  std::rename(temporary.c_str(), path.c_str());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The note is copied while its thread is still parked in the park the snapshot saw (it lives in
// the thread's frame), and the text kept only if the thread stayed parked while it was written.
std::string describe_thread_note(const ThreadSnapshot& thread) {
  const BlockedCall call = *static_cast<const BlockedCall*>(thread.wait_note);
  if (!still_parked(thread)) return {};
  std::string text = describe(call, thread.rank);
  return still_parked(thread) ? text : std::string();
}

std::string numbers(const std::vector<std::uint64_t>& values) {
  std::string text;
  for (std::uint64_t v : values) text += " " + std::to_string(v);
  return text;
}

}  // namespace

struct Monitor::Look {
  std::vector<ThreadSnapshot> threads;
  Transport::Traffic traffic;
  std::vector<std::uint64_t> engine_counts;  // arrived and sent, by local rank
  bool quiescent = false;
  bool ranks_live = false;  // some rank thread of this process runs or waits

  // The same threads in the same parks (or states), the same messages.
  bool same(const Look& other) const {
    if (threads.size() != other.threads.size() || engine_counts != other.engine_counts ||
        traffic.sent != other.traffic.sent || traffic.received != other.traffic.received ||
        traffic.busy != other.traffic.busy) {
      return false;
    }
    for (std::size_t i = 0; i < threads.size(); ++i) {
      const ThreadSnapshot& a = threads[i];
      const ThreadSnapshot& b = other.threads[i];
      if (a.id != b.id || a.park_epoch != b.park_epoch || a.state != b.state) return false;
    }
    return true;
  }
  // What deadlock.timeout watches: the ranks' threads and their messages only.
  std::string rank_signature() const {
    std::string text = numbers(engine_counts) + numbers(traffic.sent) + numbers(traffic.received);
    for (const ThreadSnapshot& t : threads) {
      if (t.type != ThreadType::mpi_task) continue;
      text += " " + std::to_string(t.id) + ":" + std::to_string(t.park_epoch) + ":" +
              to_string(t.state);
    }
    return text;
  }
};

Monitor::Monitor(const Config& config, World& world, Transport* transport)
    : world_(world),
      transport_(transport),
      report_(config.get_string("deadlock.report") == "on"),
      timeout_ns_(config.get_int("deadlock.timeout") * 1'000'000'000) {
  if (::pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
  if (!world.single_process() && report_) {
    directory_ =
        weft::stack_files::directory() + "/" + std::string(kDirectoryPrefix) + world.job_key();
    ::mkdir(directory_.c_str(), 0700);
  }
  quit_pipe.store(wake_pipe_[1], std::memory_order_relaxed);
  struct sigaction action = {};
  action.sa_handler = on_quit;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGQUIT, &action, &previous_quit);
  ready_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  const std::string name = weft::stack_files::ready(::getpid());
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // abstract: sun_path[0] = 0
  ::bind(ready_, reinterpret_cast<const sockaddr*>(&address),
         static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size()));
  thread_ = std::thread([this] { loop(); });
}

Monitor::~Monitor() {
  stop_.store(true, std::memory_order_relaxed);
  const char byte = 's';
  [[maybe_unused]] const ssize_t ignored = ::write(wake_pipe_[1], &byte, 1);
  thread_.join();
  ::sigaction(SIGQUIT, &previous_quit, nullptr);
  quit_pipe.store(-1, std::memory_order_relaxed);
  ::close(ready_);
  if (!directory_.empty()) {
    ::unlink((directory_ + "/process-" + std::to_string(world_.process())).c_str());
    ::rmdir(directory_.c_str());  // the last process to leave removes it
  }
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
}

Monitor::Look Monitor::look() {
  Look now;
  // Messages first, threads after: a message taken in before the first look of traffic woke its
  // receiver before the count moved (under the transport's lock), so the thread look sees it.
  if (transport_ != nullptr) now.traffic = transport_->traffic();
  for (int r = world_.first_local(); r < world_.first_local() + world_.local_ranks(); ++r) {
    const Engine& engine = world_.rank(r).engine;
    now.engine_counts.push_back(engine.messages_arrived());
    now.engine_counts.push_back(engine.messages_sent());
  }
  now.threads = snapshot_threads(false);
  bool quiescent = !now.traffic.busy && !timers_pending() && rank_kernel_threads() == 0;
  for (const ThreadSnapshot& t : now.threads) {
    if (t.type == ThreadType::mpi_task) now.ranks_live = true;
    if (t.state != ThreadSnapshot::State::parked) {
      quiescent = false;
    } else if (t.type == ThreadType::mpi_task) {
      // A rank's thread must wait in an MPI call that only another MPI call can end.
      if (t.wait_note == nullptr || !still_parked(t)) {
        quiescent = false;
      }
    } else if (t.type != ThreadType::progress && t.type != ThreadType::omp_worker) {
      // A plain or io thread may be parked on I/O that the I/O manager completes.
      quiescent = false;
    }
  }
  now.quiescent = quiescent;
  return now;
}

void Monitor::loop() {
  Look previous;
  bool have_previous = false;
  std::string signature;
  std::int64_t signature_since = monotonic_ns();
  while (!stop_.load(std::memory_order_relaxed)) {
    pollfd wake = {wake_pipe_[0], POLLIN, 0};
    if (::poll(&wake, 1, kPeriodMs) > 0) {
      char bytes[16];
      bool quit = false;
      for (ssize_t n; (n = ::read(wake_pipe_[0], bytes, sizeof bytes)) > 0;) {
        for (ssize_t i = 0; i < n; ++i) quit = quit || bytes[i] == 'q';
      }
      if (stop_.load(std::memory_order_relaxed)) return;
      if (quit) dump_stacks();
    }
    if (!report_ && timeout_ns_ == 0) continue;
    Look now = look();
    const bool stable = have_previous && now.quiescent && previous.quiescent && now.same(previous);
    if (!have_previous || !now.same(previous)) ++generation_;
    if (report_) {
      if (world_.single_process()) {
        if (stable && now.ranks_live) {
          end_job(render(local_report(world_, now.threads), true,
                         "every thread of the job parked in the same wait at two looks " +
                             std::to_string(kPeriodMs) + " ms apart, none with a deadline"),
                  "deadlock.report=off");
        }
      } else {
        exchange(now, stable);
      }
    }
    if (timeout_ns_ > 0) {
      const std::string current = now.rank_signature();
      if (current != signature) {
        signature = current;
        signature_since = monotonic_ns();
      } else if (now.ranks_live && monotonic_ns() - signature_since >= timeout_ns_) {
        end_job(render(local_report(world_, now.threads), false,
                       "no rank thread of process " + std::to_string(world_.process()) +
                           " woke, parked or exchanged a message for deadlock.timeout = " +
                           std::to_string(timeout_ns_ / 1'000'000'000) + " s"),
                "deadlock.timeout=0");
      }
    }
    previous = std::move(now);
    have_previous = true;
  }
}

void Monitor::exchange(const Look& now, bool stable) {
  const int processes = world_.layout().processes();
  std::string state = "quiescent " + std::string(stable ? "1" : "0") + "\nsent" +
                      numbers(now.traffic.sent) + "\nreceived" + numbers(now.traffic.received) +
                      "\n";
  if (stable) state += serialize(local_report(world_, now.threads));
  state = "generation " + std::to_string(generation_) + "\n" + state;
  if (state != published_) {
    publish_file(directory_ + "/process-" + std::to_string(world_.process()), state);
    published_ = state;
  }
  if (world_.process() != 0) return;
  // Process 0 decides from every process's last state.
  std::string generations;
  std::vector<std::vector<std::uint64_t>> sent(static_cast<std::size_t>(processes));
  std::vector<std::vector<std::uint64_t>> received(static_cast<std::size_t>(processes));
  Report joined;
  bool all_quiescent = true;
  for (int p = 0; p < processes && all_quiescent; ++p) {
    const std::string text = read_file(directory_ + "/process-" + std::to_string(p));
    std::istringstream in(text);
    std::string word;
    std::uint64_t generation = 0;
    int quiescent = 0;
    in >> word >> generation >> word >> quiescent;
    if (word != "quiescent" || quiescent != 1) {
      all_quiescent = false;
      break;
    }
    generations += std::to_string(generation) + " ";
    auto read_counts = [&](std::vector<std::uint64_t>& into) {
      in >> word;
      for (int q = 0; q < processes; ++q) {
        std::uint64_t v = 0;
        in >> v;
        into.push_back(v);
      }
    };
    read_counts(sent[static_cast<std::size_t>(p)]);
    read_counts(received[static_cast<std::size_t>(p)]);
    std::string rest;
    std::getline(in, rest);  // the end of the counts' line
    std::getline(in, rest, '\0');
    Report part = deserialize(rest);
    for (RankRecord& r : part.ranks) joined.ranks.push_back(std::move(r));
    for (std::string& u : part.unmatched) joined.unmatched.push_back(std::move(u));
  }
  bool balanced = all_quiescent;
  for (int p = 0; p < processes && balanced; ++p) {
    for (int q = 0; q < processes; ++q) {
      const std::uint64_t out = sent[static_cast<std::size_t>(p)][static_cast<std::size_t>(q)];
      const std::uint64_t in = received[static_cast<std::size_t>(q)][static_cast<std::size_t>(p)];
      if (out != in) balanced = false;
    }
  }
  bool some_blocked = false;
  for (const RankRecord& r : joined.ranks) {
    some_blocked = some_blocked || r.state == RankRecord::State::blocked;
  }
  if (!balanced || !some_blocked) {
    previous_reads_.clear();
    return;
  }
  if (generations != previous_reads_) {
    previous_reads_ = generations;
    return;
  }
  end_job(render(std::move(joined), true,
                 "every thread of the " + std::to_string(processes) +
                     " processes parked in the same wait at two looks, no message in flight "
                     "between them (the counts sent and received match)"),
          "deadlock.report=off");
}

void Monitor::dump_stacks() {
  const std::vector<ThreadSnapshot> threads = snapshot_threads(true);
  const int first = world_.first_local();
  std::string text = "weft: stacks of process " + std::to_string(world_.process()) + " (pid " +
                     std::to_string(::getpid()) + ", ranks " + std::to_string(first) + "-" +
                     std::to_string(first + world_.local_ranks() - 1) + "), " +
                     std::to_string(threads.size()) + " user threads\n";
  text += format_threads(threads, describe_thread_note);
  const std::string request = weft::stack_files::request(::getpid());
  if (::access(request.c_str(), F_OK) == 0) {
    publish_file(weft::stack_files::output(::getpid()), text);
    ::unlink(request.c_str());
  } else {
    write_all(STDERR_FILENO, text);
  }
}

void Monitor::end_job(const std::string& report, const char* key) {
  // The destructor does not run: its files go now. Process 0 removes the job's directory; the
  // other processes are stopped by weftrun once it ended.
  if (!directory_.empty()) {
    for (int p = 0; p < world_.layout().processes(); ++p) {
      ::unlink((directory_ + "/process-" + std::to_string(p)).c_str());
      ::unlink((directory_ + "/process-" + std::to_string(p) + ".tmp").c_str());
    }
    ::rmdir(directory_.c_str());
  }
  write_all(STDERR_FILENO, report + "weft: ending the job with status " +
                               std::to_string(kDeadlockExitStatus) + " (--set " + key +
                               " disables this report)\n");
  std::_Exit(kDeadlockExitStatus);
}

void remove_job_files_of_ended_process(int pid) {
  // The job key starts with process 0's pid (init/job.cpp).
  const std::string prefix = std::string(kDirectoryPrefix) + std::to_string(pid) + "-";
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(weft::stack_files::directory(), error)) {
    if (entry.path().filename().string().starts_with(prefix)) {
      std::filesystem::remove_all(entry.path(), error);
    }
  }
}

}  // namespace weft::mpi
