#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <mutex>
#include <numeric>
#include <string>

#include "current.h"
#include "futex.h"
#include "scheduler_impl.h"
#include "thread_storage.h"
#include "weft/error.h"
#include "weft/placement.h"
#include "weft/trace_file.h"

namespace weft {

namespace {

std::atomic<Scheduler*> running{nullptr};
std::atomic<Scheduler::Impl*> running_impl{nullptr};

// A child of fork has one kernel thread, the one that called fork: the other virtual processors'
// threads, the spare threads and the progress threads are not in it. It is a plain process: no
// scheduler runs, and its thread, even when it was a user thread's, is no user thread of one, so
// that weft's calls (blocking calls, OpenMP, exit) act as for any thread outside the scheduler
// instead of waiting for a core that will never run anything.
void leave_scheduler_in_child() noexcept {
  detail::set_current_vp(nullptr);
  running_impl.store(nullptr, std::memory_order_relaxed);  // one thread: nothing to order
  running.store(nullptr, std::memory_order_relaxed);
}

[[maybe_unused]] const int fork_handler_registered =
    ::pthread_atfork(nullptr, nullptr, leave_scheduler_in_child);

struct ServiceRegistry {
  std::mutex mutex;
  std::vector<Scheduler::ServiceFactory> factories;
};

// Function-local: services register from other files' static initializers.
ServiceRegistry& service_registry() {
  static ServiceRegistry registry;
  return registry;
}

std::size_t page_rounded(std::size_t bytes) {
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

void fiber_entry(detail::transfer_t from) noexcept {
  detail::VirtualProcessor* vp = detail::current_vp();
  vp->finish_switch(from, nullptr);
  detail::Fiber* self = vp->current();
  try {
    self->body();
    // Captured state is destroyed here, while this is still a thread that may block.
    self->body = nullptr;
    if (self->local_destroy != nullptr) self->local_destroy(self->local_data);
    detail::release_thread_storage(*self);
  } catch (const std::exception& e) {
    fatal("thread " + std::to_string(self->id) + " (type " + std::string(to_string(self->type)) +
          (self->rank >= 0 ? ", rank " + std::to_string(self->rank) : std::string()) +
          ") ended by an uncaught exception: " + e.what());
  } catch (...) {
    fatal("thread " + std::to_string(self->id) + " (type " + std::string(to_string(self->type)) +
          ") ended by an uncaught exception of unknown type");
  }
  detail::current_vp()->exit_current();
}

StackPoolOptions stack_options(const Config& config, const Topology& topology) {
  StackPoolOptions options;
  options.guard_pages = config.get_bool("stack.guard");
  options.cached_per_class = static_cast<std::size_t>(config.get_int("stack.cache"));
  options.max_guarded = static_cast<std::size_t>(config.get_int("stack.max_guarded"));
  // Stacks go on their thread's node only where there is more than one real node to choose.
  if (topology.is_this_machine() && topology.num_numa_nodes() > 1) {
    for (int n = 0; n < topology.num_numa_nodes(); ++n) {
      options.node_os_index.push_back(topology.numa_os_index(n));
    }
  }
  return options;
}

}  // namespace

namespace detail {
Scheduler::Impl* running_scheduler() noexcept {
  return running_impl.load(std::memory_order_acquire);
}
}  // namespace detail

Scheduler::Impl::Impl(const Config& cfg)
    : config(cfg), topology(configured_topology(cfg)), stacks(stack_options(cfg, topology)) {
  for (ThreadType type : kThreadTypes) {
    priorities[static_cast<int>(type)] = config.priority(type);
    stack_sizes[static_cast<int>(type)] = config.stack_size(type);
  }
  progress_boost = static_cast<int>(config.get_int("priority.progress_boost"));
  starvation_limit = static_cast<std::uint32_t>(config.get_int("scheduler.starvation_limit"));
  spin_ns = config.get_int("scheduler.spin_us") * 1000;
  idle_spin_ns = config.get_int("scheduler.idle_spin_us") * 1000;
  preempt_period_ms = static_cast<long>(config.get_int("scheduler.preempt_ms"));

  trace::start(trace::settings_of(config));
  const int count = virtual_processor_count(config, topology);
  for (int n = 0; n < topology.num_numa_nodes(); ++n) {
    nodes.push_back(std::make_unique<detail::NumaNode>());
    nodes.back()->index = n;
  }
  for (int i = 0; i < count; ++i) {
    detail::NumaNode& node = *nodes[topology.core(i).numa];
    vps.push_back(std::make_unique<detail::VirtualProcessor>(*this, i, i, node));
    node.vps.push_back(vps.back().get());
  }
  hooks.watch_switch_hooks([this](bool any) {
    for (const auto& vp : vps) vp->set_attention(detail::VirtualProcessor::kSwitchHooks, any);
  });
}

Scheduler::Impl::~Impl() = default;

detail::Fiber* Scheduler::Impl::new_fiber(const ThreadAttr& attr, std::function<void()> body) {
  const int num_vps = static_cast<int>(vps.size());
  const int priority = attr.priority.value_or(priorities[static_cast<int>(attr.type)]);
  if (priority < kMinPriority || priority > kMaxPriority) {
    throw Error("weft::spawn: ThreadAttr::priority = " + std::to_string(priority) + "; expected " +
                std::to_string(kMinPriority) + ".." + std::to_string(kMaxPriority));
  }
  detail::VirtualProcessor* here = detail::current_vp();
  int start = 0;
  const int index = attr.placement.index;
  switch (attr.placement.kind) {
    case Placement::Kind::pinned:
      if (index < 0 || index >= num_vps) {
        throw Error("weft::spawn: Placement::pinned(" + std::to_string(index) +
                    ") names no virtual processor; expected 0.." + std::to_string(num_vps - 1));
      }
      start = index;
      break;
    case Placement::Kind::numa:
      if (index < 0 || index >= static_cast<int>(nodes.size()) || nodes[index]->vps.empty()) {
        throw Error("weft::spawn: Placement::numa(" + std::to_string(index) +
                    ") names no NUMA node with a virtual processor; expected a node of 0.." +
                    std::to_string(nodes.size() - 1) + " that runs one (see weft-info)");
      }
      start = nodes[index]->vps.front()->index();
      break;
    case Placement::Kind::free:
      if (index >= num_vps) {
        throw Error("weft::spawn: Placement::free(" + std::to_string(index) +
                    ") names no virtual processor; expected -1 or 0.." +
                    std::to_string(num_vps - 1));
      }
      if (index >= 0) {
        start = index;
      } else if (here != nullptr) {
        start = here->index();
      } else {
        start = static_cast<int>(round_robin.fetch_add(1, std::memory_order_relaxed) % num_vps);
      }
      break;
  }
  const std::size_t size = page_rounded(
      attr.stack_size != 0 ? attr.stack_size : stack_sizes[static_cast<int>(attr.type)]);
  const int numa = vps[start]->numa();

  detail::Fiber* fiber = here != nullptr ? here->cached_fiber() : nullptr;
  if (fiber == nullptr) {
    pool_lock.lock();
    fiber = pool;
    if (fiber != nullptr) pool = fiber->pool_next;
    pool_lock.unlock();
  }
  if (fiber == nullptr) {
    auto owned = std::make_unique<detail::Fiber>();
    fiber = owned.get();
    pool_lock.lock();
    all_fibers.push_back(std::move(owned));
    pool_lock.unlock();
  }
  if (fiber->stack.base != nullptr && (fiber->stack.size != size || fiber->stack.numa != numa)) {
    stacks.release(fiber->stack);
    fiber->stack = {};
  }
  if (fiber->stack.base == nullptr) {
    try {
      fiber->stack = stacks.acquire(size, numa);
    } catch (...) {
      release_fiber_memory(fiber);
      throw;
    }
  }
  // Atomic: a thread dump (snapshot_threads, which the deadlock monitor takes from its own kernel
  // thread) may be reading these of the fiber's previous thread, which it saw live.
  std::atomic_ref(fiber->id).store(next_id.fetch_add(1, std::memory_order_relaxed),
                                   std::memory_order_relaxed);
  std::atomic_ref(fiber->type).store(attr.type, std::memory_order_relaxed);
  std::atomic_ref(fiber->rank).store(attr.rank, std::memory_order_relaxed);
  fiber->local_data = nullptr;
  fiber->local_destroy = nullptr;
  std::atomic_ref(fiber->placement.kind).store(attr.placement.kind, std::memory_order_relaxed);
  std::atomic_ref(fiber->placement.index).store(attr.placement.index, std::memory_order_relaxed);
  fiber->fast_yield =
      attr.placement.kind == Placement::Kind::pinned && fiber->stack.guard != nullptr;
  fiber->priority.store(priority, std::memory_order_relaxed);
  fiber->base_priority = priority;
  fiber->vp.store(start, std::memory_order_relaxed);
  fiber->preferred_vp.store(-1, std::memory_order_relaxed);
  // Keep the epoch across reuse: a stale wake-up for the previous thread must still miss.
  const std::uint64_t epoch = detail::park_epoch(fiber->park.load(std::memory_order_relaxed));
  fiber->park.store(detail::park_word(epoch + 1, detail::ParkState::running),
                    std::memory_order_relaxed);
  fiber->body = std::move(body);
  fiber->wait_note.store(nullptr, std::memory_order_relaxed);
  // release: a thread dump that sees it live sees the fields above.
  fiber->live.store(true, std::memory_order_release);
  fiber->refs.store(2, std::memory_order_relaxed);
  fiber->done = false;
  fiber->woken = false;
  detail::sanitizer::forget_stack(fiber->stack.base, fiber->stack.size);
  fiber->tsan_fiber = detail::sanitizer::create_fiber();
  fiber->context = detail::make_fcontext(fiber->stack.top(), fiber->stack.size, &fiber_entry);
  live.fetch_add(1, std::memory_order_relaxed);
  return fiber;
}

void Scheduler::Impl::release_fiber(detail::Fiber* fiber) noexcept {
  // acq_rel: the last owner must see every write of the others before recycling.
  if (fiber->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  detail::VirtualProcessor* here = detail::current_vp();
  if (here != nullptr && &here->scheduler() == this && here->cache_fiber(fiber)) return;
  release_fiber_memory(fiber);
}

void Scheduler::Impl::release_fiber_memory(detail::Fiber* fiber) noexcept {
  if (fiber->stack.base != nullptr) {
    stacks.release(fiber->stack);
    fiber->stack = {};
  }
  pool_lock.lock();
  fiber->pool_next = pool;
  pool = fiber;
  pool_lock.unlock();
}

void Scheduler::Impl::thread_ended(detail::Fiber* fiber) noexcept {
  fiber->live.store(false, std::memory_order_relaxed);
  // Counted out before the joiners wake, so that a joiner never sees its thread still live.
  // shutdown() may see zero now, but it joins this processor before tearing anything down.
  if (live.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    all_done.fetch_add(1);
    detail::futex_wake(&all_done, INT_MAX);
  }
  fiber->joiners.lock.lock();
  fiber->done = true;
  detail::WaiterChain joiners = fiber->joiners.take_all();
  fiber->joiners.lock.unlock();
  joiners.deliver();
  // The thread's context is gone: this runs on the context that its last switch went to.
  detail::sanitizer::destroy_fiber(fiber->tsan_fiber);
  fiber->tsan_fiber = nullptr;
  release_fiber(fiber);
}

void Scheduler::Impl::make_runnable(detail::Fiber* fiber) noexcept {
  switch (fiber->placement.kind) {
    case Placement::Kind::pinned:
      vps[fiber->placement.index]->push_pinned(fiber);
      return;
    case Placement::Kind::numa: {
      detail::NumaNode& node = *nodes[fiber->placement.index];
      const std::size_t queued = node.queue.push_back(fiber);
      detail::VirtualProcessor* here = detail::current_vp();
      // Same rule as free threads, within the node: a processor of the node that queues one
      // thread runs it itself; surplus, or work from elsewhere, wakes a sleeping one.
      if (here == nullptr || &here->node() != &node || queued >= 2) wake_idle(node.index, true);
      return;
    }
    case Placement::Kind::free: {
      if (fiber->preferred_vp.load(std::memory_order_relaxed) >= 0) {
        const int preferred = fiber->preferred_vp.exchange(-1, std::memory_order_relaxed);
        if (preferred >= 0) fiber->vp.store(preferred, std::memory_order_relaxed);
      }
      detail::VirtualProcessor& vp = *vps[fiber->vp.load(std::memory_order_relaxed)];
      const bool by_owner = &vp == detail::current_vp();
      const std::size_t queued = vp.shared().push_back(fiber, by_owner);
      if (by_owner) {
        // Queued by a thread of its owner (a spawn, a wake-up between threads of one core, a
        // free thread's requeue at its switch): the owner runs it at its next scheduling point,
        // so a lone thread wakes nobody and a ping-pong on one core makes no system call.
        // Surplus work: a sleeping processor may steal it while this one is busy.
        if (queued >= 2) wake_idle(vp.numa(), false);
        return;
      }
      // Queued from elsewhere. An owner asleep takes it. An owner awake may be running a thread
      // that does not yield for a long time, and the thread would wait behind it while cores
      // sleep: Go's rule then wakes a sleeping processor unless one searches (it will steal the
      // thread). wake_idle() returns after two loads when no processor sleeps or one searches.
      if (!vp.wake_if_sleeping() || queued >= 2) wake_idle(vp.numa(), false);
      return;
    }
  }
}

void Scheduler::Impl::wake_idle(int numa, bool node_only) noexcept {
  // seq_cst: pairs with the searching processors' decrement before their last look (see
  // VirtualProcessor::idle_loop); a searcher that will see this work makes a wake-up useless.
  if ((node_only ? nodes[numa]->searching.load() : searching.load()) != 0) return;
  // seq_cst: a sleeper counts itself in before its seq_cst look at the queues (see
  // VirtualProcessor::sleep), so a zero read here comes before that look, which sees the work.
  if (sleeping.load() == 0) return;
  for (detail::VirtualProcessor* vp : nodes[numa]->vps) {
    if (vp->wake_if_sleeping()) return;
  }
  if (node_only) return;
  for (const auto& vp : vps) {
    if (vp->numa() != numa && vp->wake_if_sleeping()) return;
  }
}

Scheduler::Scheduler(const Config& config) : impl_(std::make_unique<Impl>(config)) {
  Scheduler* expected = nullptr;
  if (!running.compare_exchange_strong(expected, this)) {
    throw Error("weft::Scheduler: a scheduler already runs in this process; shut it down first");
  }
  running_impl.store(impl_.get(), std::memory_order_release);
  impl_->crash_handler.emplace();
  const Topology& topology = impl_->topology;
  for (const auto& vp : impl_->vps) {
    std::vector<detail::VirtualProcessor*> victims;
    for (const auto& other : impl_->vps) {
      if (other != vp) victims.push_back(other.get());
    }
    // Nearest NUMA node first, then nearest index, so that stealing stays local when it can.
    std::stable_sort(victims.begin(), victims.end(), [&](auto* a, auto* b) {
      const int da = topology.distance(vp->numa(), a->numa());
      const int db = topology.distance(vp->numa(), b->numa());
      if (da != db) return da < db;
      return std::abs(a->index() - vp->index()) < std::abs(b->index() - vp->index());
    });
    vp->start(std::move(victims));
  }
  std::vector<ServiceFactory> factories;
  {
    std::lock_guard lock(service_registry().mutex);
    factories = service_registry().factories;
  }
  try {
    for (ServiceFactory factory : factories) impl_->services.push_back(factory(*this));
  } catch (...) {
    shutdown();
    throw;
  }
}

void Scheduler::add_service(ServiceFactory factory) {
  std::lock_guard lock(service_registry().mutex);
  service_registry().factories.push_back(factory);
}

Scheduler::~Scheduler() {
  shutdown();
}

void Scheduler::shutdown() {
  if (!impl_) return;
  if (detail::current_vp() != nullptr) {
    fatal(
        "weft::Scheduler::shutdown called from a weft thread; call it from the thread that "
        "created the scheduler");
  }
  impl_->stopping.store(true);
  for (const auto& service : impl_->services) service->stop();
  for (;;) {
    const std::uint32_t seen = impl_->all_done.load();
    if (impl_->live.load() == 0) break;
    detail::futex_wait(&impl_->all_done, seen);
  }
  while (!impl_->services.empty()) impl_->services.pop_back();
  for (const auto& vp : impl_->vps) vp->notify();
  for (const auto& vp : impl_->vps) vp->join();
  trace::stop_and_write();
  running_impl.store(nullptr, std::memory_order_release);
  running.store(nullptr);
  impl_.reset();
}

Scheduler* Scheduler::current() {
  return running.load();
}
const Config& Scheduler::config() const {
  return impl_->config;
}
const Topology& Scheduler::topology() const {
  return impl_->topology;
}
int Scheduler::num_vps() const {
  return static_cast<int>(impl_->vps.size());
}
int Scheduler::vp_core(int vp) const {
  return impl_->vps.at(vp)->core();
}
int Scheduler::vp_numa(int vp) const {
  return impl_->vps.at(vp)->numa();
}
std::size_t Scheduler::live_threads() const {
  return impl_->live.load();
}
int Scheduler::searching_vps() const {
  return static_cast<int>(impl_->searching.load());
}

std::vector<Scheduler::VpStats> Scheduler::stats() const {
  std::vector<VpStats> all;
  for (const auto& vp : impl_->vps) all.push_back(vp->stats());
  return all;
}

Scheduler::HookId Scheduler::add_idle_hook(std::function<bool()> hook) {
  auto h = std::make_shared<detail::Hook>();
  h->kind = detail::Hook::Kind::idle;
  h->idle = std::move(hook);
  const HookId id = impl_->hooks.add(std::move(h));
  // Sleeping processors are idle too: they run the new hook once before sleeping again.
  for (const auto& vp : impl_->vps) vp->notify();
  return id;
}

Scheduler::HookId Scheduler::add_sleep_hook(std::function<bool()> hook) {
  auto h = std::make_shared<detail::Hook>();
  h->kind = detail::Hook::Kind::sleep;
  h->idle = std::move(hook);
  return impl_->hooks.add(std::move(h));
}

Scheduler::HookId Scheduler::add_switch_hook(std::function<void()> hook) {
  auto h = std::make_shared<detail::Hook>();
  h->kind = detail::Hook::Kind::on_switch;
  h->action = std::move(hook);
  return impl_->hooks.add(std::move(h));
}

Scheduler::HookId Scheduler::add_timer_hook(std::chrono::nanoseconds period,
                                            std::function<void()> hook) {
  if (period.count() <= 0) {
    throw Error("weft::Scheduler::add_timer_hook: period = " + std::to_string(period.count()) +
                " ns; expected a positive duration");
  }
  auto h = std::make_shared<detail::Hook>();
  h->kind = detail::Hook::Kind::timer;
  h->action = std::move(hook);
  h->period_ns = period.count();
  h->next_due_ns.store(detail::steady_now_ns() + period.count());
  const HookId id = impl_->hooks.add(std::move(h));
  // Sleeping processors computed their deadline without this hook; busy ones may be on the
  // housekeeping's quiet budget.
  for (const auto& vp : impl_->vps) {
    vp->set_attention(detail::VirtualProcessor::kHousekeepingSoon, true);
    vp->notify();
  }
  return id;
}

void Scheduler::remove_hook(HookId id) {
  impl_->hooks.remove(id);
}

}  // namespace weft
