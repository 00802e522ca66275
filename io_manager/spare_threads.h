// The spare kernel threads that carry out blocking calls on behalf of user threads (PIOMan's
// technique for what cannot become a wait on the I/O manager: flock, waitpid, a regular file's
// read that misses the page cache, any call a program wraps in weft::io::blocking_call). The
// caller parks; its core runs its other user threads; the spare thread makes the call, hands
// errno back and unparks the caller.
//
// Threads are made on demand, up to io.spare_threads, and kept until the scheduler shuts down,
// when none is busy (a parked caller keeps the scheduler from finishing). A call that finds every
// spare thread busy runs on its core, as if there were no I/O manager: queueing it behind calls
// that may never end (a waitpid) could deadlock what would otherwise finish.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "stats.h"

namespace weft::detail {
struct Fiber;
}

namespace weft::io::detail {

class SpareThreads {
 public:
  SpareThreads(int max_threads, Counters& counters);
  ~SpareThreads();
  SpareThreads(const SpareThreads&) = delete;
  SpareThreads& operator=(const SpareThreads&) = delete;

  // Runs body(context) on a spare thread while the calling user thread is parked, or on the
  // calling thread when every spare thread is busy. errno after the call is body's.
  void run(void (*body)(void*), void* context) noexcept;

 private:
  // A call handed over; lives in the parked caller's frame until the caller is unparked.
  struct Job {
    void (*body)(void*) = nullptr;
    void* context = nullptr;
    weft::detail::Fiber* fiber = nullptr;
    std::uint64_t epoch = 0;
    int error = 0;
  };

  void main() noexcept;

  const std::size_t max_threads_;
  Counters& counters_;
  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<Job*> jobs_;  // each has a thread bound to take it: see run()
  std::size_t idle_ = 0;   // threads waiting for a job that no queued job is bound to
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// errno through an out-of-line call: after a park the caller may run on another kernel thread,
// and the compiler may reuse the errno address it computed before the switch (__errno_location
// is declared const). Every read or write of errno after a wait goes through these.
int current_errno() noexcept;
void set_errno(int error) noexcept;

}  // namespace weft::io::detail
