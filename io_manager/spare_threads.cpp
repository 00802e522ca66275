#include "spare_threads.h"

#include <errno.h>
#include <pthread.h>

#include "kernel_thread_rank.h"
#include "park.h"
#include "weft/error.h"

namespace weft::io::detail {

SpareThreads::SpareThreads(int max_threads, Counters& counters)
    : max_threads_(static_cast<std::size_t>(max_threads)), counters_(counters) {}

SpareThreads::~SpareThreads() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void SpareThreads::run(void (*body)(void*), void* context) noexcept {
  weft::detail::Fiber* self = weft::detail::current_fiber();
  Job job{body, context, self, 0, 0};
  std::unique_lock lock(mutex_);
  // Every queued job is bound to a thread that will take it: an idle one (counted out of idle_
  // here) or one made for it. So no job waits behind a call that may never end.
  bool make_thread = false;
  if (idle_ > 0) {
    --idle_;
  } else if (threads_.size() < max_threads_) {
    make_thread = true;
  } else {
    lock.unlock();
    counters_.spare_full.fetch_add(1, std::memory_order_relaxed);
    body(context);
    return;
  }
  job.epoch = weft::detail::prepare_park(self);
  jobs_.push_back(&job);
  if (make_thread) {
    try {
      // A rank's blocking call may start it; it serves every rank.
      const weft::detail::RuntimeThreadCreation runtime_thread;
      threads_.emplace_back([this] { main(); });
    } catch (const std::system_error& e) {
      fatal(std::string("I/O manager: cannot start a spare kernel thread: ") + e.what());
    }
    pthread_setname_np(threads_.back().native_handle(), "weft-spare");
  }
  lock.unlock();
  if (!make_thread) work_.notify_one();
  counters_.spare_calls.fetch_add(1, std::memory_order_relaxed);
  weft::detail::park();
  set_errno(job.error);
}

void SpareThreads::main() noexcept {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;
    Job* job = jobs_.front();
    jobs_.pop_front();
    lock.unlock();
    job->body(job->context);
    job->error = errno;
    // The job lives in the caller's frame, which may be gone as soon as it is unparked.
    weft::detail::Fiber* fiber = job->fiber;
    const std::uint64_t epoch = job->epoch;
    weft::detail::unpark(fiber, epoch);
    lock.lock();
    ++idle_;
  }
}

[[gnu::noinline]] int current_errno() noexcept {
  return errno;
}

[[gnu::noinline]] void set_errno(int error) noexcept {
  errno = error;
}

}  // namespace weft::io::detail
