#include "hooks.h"

#include <algorithm>
#include <climits>
#include <thread>

#include "weft/error.h"

namespace weft::detail {

Hooks::Hooks() {
  publish_locked(std::make_unique<const List>());
}

std::uint64_t Hooks::add(std::shared_ptr<Hook> hook) {
  std::lock_guard lock(mutex_);
  hook->id = next_id_++;
  const std::uint64_t id = hook->id;
  auto list = std::make_unique<List>(snapshot());
  list->push_back(std::move(hook));
  publish_locked(std::move(list));
  return id;
}

void Hooks::remove(std::uint64_t id) {
  std::shared_ptr<Hook> removed;
  {
    std::lock_guard lock(mutex_);
    auto list = std::make_unique<List>(snapshot());
    auto it = std::find_if(list->begin(), list->end(), [&](const auto& h) { return h->id == id; });
    if (it == list->end()) {
      throw Error("weft::Scheduler::remove_hook: no hook has id " + std::to_string(id));
    }
    removed = *it;
    list->erase(it);
    publish_locked(std::move(list));
  }
  // seq_cst with the runners' increment of `active` then read of `removed`: either a runner sees
  // the flag and skips the hook, or this loop sees it inside and waits.
  removed->removed.store(true);
  while (removed->active.load() != 0) std::this_thread::yield();
}

void Hooks::watch_switch_hooks(std::function<void(bool)> watcher) {
  std::lock_guard lock(mutex_);
  switch_watcher_ = std::move(watcher);
  switch_watcher_(switch_hooks_.load(std::memory_order_relaxed) != 0);
}

void Hooks::publish_locked(std::unique_ptr<const List> list) {
  int switches = 0;
  int idles = 0;
  int sleeps = 0;
  int poll_sleeps = 0;
  std::int64_t due = INT64_MAX;
  for (const auto& hook : *list) {
    switch (hook->kind) {
      case Hook::Kind::on_switch:
        ++switches;
        break;
      case Hook::Kind::idle:
        ++idles;
        break;
      case Hook::Kind::timer:
        due = std::min(due, hook->next_due_ns.load());
        break;
      case Hook::Kind::sleep:
        ++sleeps;
        break;
      case Hook::Kind::poll_sleep:
        ++poll_sleeps;
        break;
    }
  }
  // release: a processor that loads the pointer sees the list it points to.
  current_.store(list.get(), std::memory_order_release);
  lists_.push_back(std::move(list));
  switch_hooks_.store(switches, std::memory_order_relaxed);
  // After the list and the count: a processor that sees the bit finds the hook.
  if (switch_watcher_) switch_watcher_(switches != 0);
  idle_hooks_.store(idles, std::memory_order_relaxed);
  sleep_hooks_.store(sleeps, std::memory_order_relaxed);
  poll_sleep_hooks_.store(poll_sleeps, std::memory_order_relaxed);
  next_timer_due_.store(due, std::memory_order_relaxed);
}

namespace {
// Runs `call` unless the hook is being removed; see Hooks::remove for the handshake.
template <class Call>
bool enter(Hook& hook, Call&& call) {
  hook.active.fetch_add(1);
  bool result = false;
  if (!hook.removed.load()) result = call();
  hook.active.fetch_sub(1, std::memory_order_release);
  return result;
}
}  // namespace

bool Hooks::run_idle() noexcept {
  bool progress = false;
  for (const auto& hook : snapshot()) {
    if (hook->kind != Hook::Kind::idle) continue;
    progress = enter(*hook, [&] { return hook->idle(); }) || progress;
  }
  return progress;
}

bool Hooks::run_sleep() noexcept {
  bool keep_looking = false;
  // Every sleep hook runs, even once one asked to keep looking: each may have work to hand over.
  for (const auto& hook : snapshot()) {
    if (hook->kind != Hook::Kind::sleep) continue;
    keep_looking = enter(*hook, [&] { return hook->idle(); }) || keep_looking;
  }
  return keep_looking;
}

bool Hooks::run_poll_sleep(int wake_fd, std::int64_t deadline_ns) noexcept {
  for (const auto& hook : snapshot()) {
    if (hook->kind != Hook::Kind::poll_sleep) continue;
    if (enter(*hook, [&] { return hook->poll_sleep(wake_fd, deadline_ns); })) return true;
  }
  return false;
}

void Hooks::run_switch() noexcept {
  for (const auto& hook : snapshot()) {
    if (hook->kind != Hook::Kind::on_switch) continue;
    enter(*hook, [&] {
      hook->action();
      return true;
    });
  }
}

void Hooks::run_timers(std::int64_t now_ns) noexcept {
  std::int64_t next = INT64_MAX;
  for (const auto& hook : snapshot()) {
    if (hook->kind != Hook::Kind::timer) continue;
    std::int64_t due = hook->next_due_ns.load(std::memory_order_relaxed);
    // One processor wins each period; the others see the new due time.
    if (due <= now_ns && hook->next_due_ns.compare_exchange_strong(due, now_ns + hook->period_ns,
                                                                   std::memory_order_relaxed)) {
      enter(*hook, [&] {
        hook->action();
        return true;
      });
      due = now_ns + hook->period_ns;
    }
    next = std::min(next, due);
  }
  next_timer_due_.store(next, std::memory_order_relaxed);
}

}  // namespace weft::detail
