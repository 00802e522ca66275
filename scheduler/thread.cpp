#include "weft/thread.h"

#include <algorithm>
#include <string>
#include <thread>

#include "current.h"
#include "fiber.h"
#include "kernel_thread_rank.h"
#include "park.h"
#include "scheduler_impl.h"
#include "weft/detail/prefer_vp.h"
#include "weft/error.h"
#include "weft/this_thread.h"

namespace weft {

namespace {

Scheduler::Impl& scheduler_or_throw(const char* call) {
  Scheduler::Impl* scheduler = detail::running_scheduler();
  if (scheduler == nullptr) {
    throw Error(std::string(call) + ": no weft::Scheduler is running; create one first");
  }
  return *scheduler;
}

void check_priority(const char* call, int priority) {
  if (priority < kMinPriority || priority > kMaxPriority) {
    throw Error(std::string(call) + ": priority = " + std::to_string(priority) + "; expected " +
                std::to_string(kMinPriority) + ".." + std::to_string(kMaxPriority));
  }
}

// Sets a thread's priority and moves it if it waits in a run queue. Queues read the priority
// when they take a thread in, so a thread queued after the store already has the new level.
void change_priority(detail::Fiber* fiber, int priority) {
  fiber->priority.store(priority, std::memory_order_relaxed);
  if (fiber->queue.load(std::memory_order_relaxed) == nullptr) return;
  Scheduler::Impl& scheduler = *detail::running_scheduler();
  switch (fiber->placement.kind) {
    case Placement::Kind::pinned:
      scheduler.vps[fiber->placement.index]->request_reprioritize();
      break;
    case Placement::Kind::numa:
      scheduler.nodes[fiber->placement.index]->queue.reprioritize(fiber);
      break;
    case Placement::Kind::free:
      scheduler.vps[fiber->vp.load(std::memory_order_relaxed)]->shared().reprioritize(fiber);
      break;
  }
}

}  // namespace

Thread spawn(const ThreadAttr& attr, std::function<void()> body) {
  Scheduler::Impl& scheduler = scheduler_or_throw("weft::spawn");
  if (!body) throw Error("weft::spawn: the thread body is empty; expected a callable");
  detail::Fiber* fiber = scheduler.new_fiber(attr, std::move(body));
  detail::VirtualProcessor* vp = detail::current_vp();
  const bool here =
      vp != nullptr && vp->current() != nullptr &&
      (attr.placement.kind == Placement::Kind::free ||
       (attr.placement.kind == Placement::Kind::pinned && attr.placement.index == vp->index()));
  if (attr.run_at_once && here) {
    vp->run_now(fiber);
  } else {
    scheduler.make_runnable(fiber);
  }
  return Thread(fiber);
}

Thread::Thread(Thread&& other) noexcept : fiber_(other.fiber_) {
  other.fiber_ = nullptr;
}

Thread& Thread::operator=(Thread&& other) noexcept {
  if (this != &other) {
    if (joinable()) {
      fatal("a joinable weft::Thread (thread " + std::to_string(id()) +
            ") was assigned over; join or detach it first");
    }
    fiber_ = other.fiber_;
    other.fiber_ = nullptr;
  }
  return *this;
}

Thread::~Thread() {
  if (joinable()) {
    fatal("a joinable weft::Thread (thread " + std::to_string(id()) + ", type " +
          std::string(to_string(fiber_->type)) + ") was destroyed; join or detach it first");
  }
}

std::uint64_t Thread::id() const noexcept {
  return fiber_ != nullptr ? fiber_->id : 0;
}

void Thread::join() {
  if (!joinable()) throw Error("weft::Thread::join: the thread is not joinable");
  if (fiber_ == detail::current_fiber()) {
    throw Error("weft::Thread::join: thread " + std::to_string(id()) + " cannot join itself");
  }
  fiber_->joiners.lock.lock();
  if (fiber_->done) {
    fiber_->joiners.lock.unlock();
  } else {
    fiber_->joiners.wait();
  }
  detail::running_scheduler()->release_fiber(fiber_);
  fiber_ = nullptr;
}

void Thread::detach() {
  if (!joinable()) throw Error("weft::Thread::detach: the thread is not joinable");
  detail::running_scheduler()->release_fiber(fiber_);
  fiber_ = nullptr;
}

void Thread::set_priority(int priority) {
  check_priority("weft::Thread::set_priority", priority);
  if (!joinable()) throw Error("weft::Thread::set_priority: the thread is not joinable");
  change_priority(fiber_, priority);
}

namespace this_thread {

void prefer_vp(int vp) {
  Scheduler::Impl& scheduler = scheduler_or_throw("weft::this_thread::prefer_vp");
  if (vp < 0 || vp >= static_cast<int>(scheduler.vps.size())) {
    throw Error("weft::this_thread::prefer_vp: vp = " + std::to_string(vp) + "; expected 0.." +
                std::to_string(scheduler.vps.size() - 1));
  }
  detail::Fiber* self = detail::current_fiber();
  if (self == nullptr) throw Error("weft::this_thread::prefer_vp: the caller is not a weft thread");
  if (self->placement.kind != Placement::Kind::free) return;
  self->preferred_vp.store(vp, std::memory_order_relaxed);
}

void move_to_vp(int vp) {
  prefer_vp(vp);
  detail::Fiber* self = detail::current_fiber();
  if (self->placement.kind != Placement::Kind::free) return;
  detail::VirtualProcessor* here = detail::current_vp();
  if (here->index() == vp) {
    // Already there: nothing to move, and the next wake-up keeps it where it runs.
    self->preferred_vp.store(-1, std::memory_order_relaxed);
    return;
  }
  here->requeue_current();
}

bool is_weft_thread() {
  return detail::current_fiber() != nullptr;
}

std::uint64_t id() {
  detail::Fiber* self = detail::current_fiber();
  return self != nullptr ? self->id : 0;
}

ThreadType type() {
  detail::Fiber* self = detail::current_fiber();
  return self != nullptr ? self->type : ThreadType::user;
}

int vp() {
  detail::VirtualProcessor* vp = detail::current_vp();
  return vp != nullptr ? vp->index() : -1;
}

int rank() {
  detail::Fiber* self = detail::current_fiber();
  return self != nullptr ? self->rank : detail::kernel_thread_rank();
}

int priority() {
  detail::Fiber* self = detail::current_fiber();
  return self != nullptr ? self->priority.load(std::memory_order_relaxed) : 0;
}

void set_priority(int priority) {
  check_priority("weft::this_thread::set_priority", priority);
  detail::Fiber* self = detail::current_fiber();
  if (self == nullptr) {
    throw Error("weft::this_thread::set_priority: the caller is not a weft thread");
  }
  self->base_priority = priority;
  change_priority(self, priority);
}

void set_boosted(bool boosted) {
  detail::Fiber* self = detail::current_fiber();
  if (self == nullptr) {
    throw Error("weft::this_thread::set_boosted: the caller is not a weft thread");
  }
  const int boost = detail::running_scheduler()->progress_boost;
  change_priority(self, boosted ? std::max(self->base_priority, boost) : self->base_priority);
}

namespace {
// The slot of a kernel thread outside weft; its destroy runs when that kernel thread exits.
struct ForeignLocalData {
  void* data = nullptr;
  void (*destroy)(void*) = nullptr;
  ~ForeignLocalData() {
    if (destroy != nullptr) destroy(data);
  }
};
thread_local ForeignLocalData foreign_local_data;
}  // namespace

void* local_data() {
  detail::Fiber* self = detail::current_fiber();
  return self != nullptr ? self->local_data : foreign_local_data.data;
}

void set_local_data(void* data, void (*destroy)(void*)) {
  detail::Fiber* self = detail::current_fiber();
  if (self != nullptr) {
    self->local_data = data;
    self->local_destroy = destroy;
  } else {
    foreign_local_data.data = data;
    foreign_local_data.destroy = destroy;
  }
}

void sleep_until(std::chrono::steady_clock::time_point deadline) {
  detail::Fiber* self = detail::current_fiber();
  if (self == nullptr) {
    std::this_thread::sleep_until(deadline);
    return;
  }
  const std::int64_t deadline_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  if (deadline_ns <= detail::steady_now_ns()) {
    yield();
    return;
  }
  [[maybe_unused]] const detail::SanitizerCallScope sanitizer_scope;
  detail::TimerNode timer;
  timer.deadline_ns = deadline_ns;
  timer.fiber = self;
  timer.epoch = detail::prepare_park(self);
  detail::current_vp()->add_timer(&timer);
  detail::park();
}

void sleep_for(std::chrono::nanoseconds duration) {
  sleep_until(std::chrono::steady_clock::now() + duration);
}

}  // namespace this_thread

}  // namespace weft
