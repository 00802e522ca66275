// The public face of the I/O manager (weft/io.h): sources, descriptor waits, statistics.
#include <poll.h>

#include <string>

#include "blocking_call.h"
#include "libc.h"
#include "manager.h"
#include "park.h"
#include "timer_heap.h"
#include "weft/error.h"

namespace weft::io {

namespace {

detail::Manager& manager_or_throw(const char* call) {
  detail::Manager* manager = detail::Manager::running();
  if (manager == nullptr) {
    throw Error(std::string(call) + ": no weft::Scheduler is running; create one first");
  }
  return *manager;
}

}  // namespace

Source::Source(SourceSpec spec) {
  detail::Manager& manager = manager_or_throw("weft::io::Source");
  if (!spec.poll) {
    throw Error("weft::io::Source: source '" + spec.name +
                "' has an empty poll callback; expected a callable");
  }
  if (spec.fd < 0 && spec.low_reactivity) {
    throw Error("weft::io::Source: source '" + spec.name + "' asks for low_reactivity with fd = " +
                std::to_string(spec.fd) + "; expected a descriptor to block on");
  }
  if (spec.fd < 0 && spec.arm) {
    throw Error("weft::io::Source: source '" + spec.name + "' has an arm callback with fd = " +
                std::to_string(spec.fd) + "; expected a descriptor to block on");
  }
  if (spec.group && !spec.group->poll_all) {
    throw Error("weft::io::Source: source '" + spec.name +
                "' names a group with an empty poll_all; expected a callable");
  }
  id_ = manager.add_source(std::move(spec));
}

Source::~Source() {
  remove();
}

Source::Source(Source&& other) noexcept : id_(other.id_) {
  other.id_ = 0;
}

Source& Source::operator=(Source&& other) noexcept {
  if (this != &other) {
    remove();
    id_ = other.id_;
    other.id_ = 0;
  }
  return *this;
}

void Source::remove() {
  if (id_ == 0) return;
  // No manager: the scheduler is gone and its sources with it.
  if (detail::Manager* manager = detail::Manager::running()) manager->remove_source(id_);
  id_ = 0;
}

short wait_fd(int fd, short events, std::optional<std::chrono::nanoseconds> timeout) {
  if (fd < 0) {
    throw Error("weft::io::wait_fd: fd = " + std::to_string(fd) + "; expected a descriptor");
  }
  pollfd entry{fd, events, 0};
  detail::Manager* manager = detail::Manager::running();
  if (manager == nullptr || weft::detail::current_fiber() == nullptr ||
      detail::Manager::bypassed()) {
    const int timeout_ms =
        timeout ? static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(*timeout).count())
                : -1;
    return libc::poll(&entry, 1, timeout_ms) > 0 ? entry.revents : 0;
  }
  if (libc::poll(&entry, 1, 0) > 0) return entry.revents;
  const std::int64_t deadline = timeout ? weft::detail::steady_now_ns() + timeout->count() : -1;
  for (;;) {
    const bool ready = manager->wait(&entry, 1, deadline) == detail::WaitEnd::ready;
    entry.revents = 0;
    if (libc::poll(&entry, 1, 0) > 0) return entry.revents;
    // Woken for an event another reader consumed first: wait again unless time is up.
    if (!ready || (deadline >= 0 && weft::detail::steady_now_ns() >= deadline)) return 0;
  }
}

void detail::run_blocking(void (*body)(void*), void* context) noexcept {
  if (Manager* manager = waiting_manager()) {
    manager->run_blocking(body, context);
  } else {
    body(context);
  }
}

Stats stats() {
  return manager_or_throw("weft::io::stats").stats();
}

}  // namespace weft::io
