// Active-target synchronization (MPI-4.1 12.5.1-12.5.2): fence, and post / start / complete /
// wait. The control block's counters carry post and complete between the ranks: a post adds one
// to each origin's count of posts from this target, a start waits for a post it has not consumed
// yet, a complete adds one to each target's count of completes, and a wait waits for as many new
// completes as its post group has origins.
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "diagnostics/blocked_call.h"
#include "rma/epoch.h"
#include "rma/window_error.h"
#include "util/profiling.h"
#include "weft/trace.h"

using weft::mpi::rma::Access;
using weft::mpi::rma::check_win;
using weft::mpi::rma::raise;
using weft::mpi::rma::wait_until;
using weft::mpi::rma::Window;

namespace {

// The window's comm ranks of the members of `group`, or an error.
int ranks_of(Window& win, MPI_Group group, std::string_view function, std::vector<int>& ranks) {
  if (group == MPI_GROUP_NULL) {
    return raise(&win, function, MPI_ERR_GROUP, "group = MPI_GROUP_NULL, expected a group");
  }
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> in(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
  ranks.assign(static_cast<std::size_t>(n), MPI_UNDEFINED);
  MPI_Group window_group;
  PMPI_Comm_group(win.comm, &window_group);
  PMPI_Group_translate_ranks(group, n, in.data(), window_group, ranks.data());
  PMPI_Group_free(&window_group);
  if (std::find(ranks.begin(), ranks.end(), MPI_UNDEFINED) != ranks.end()) {
    return raise(&win, function, MPI_ERR_GROUP,
                 "group holds a process that is not in the window's group");
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Win_fence(int assert, MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_fence"); rc != MPI_SUCCESS) return rc;
  weft::mpi::rma::Epochs& e = win->epochs;
  if (e.access == Access::pscw || e.exposed || e.locked_targets > 0 || e.lock_all) {
    return raise(win, "MPI_Win_fence", MPI_ERR_RMA_SYNC,
                 "a post/start or lock epoch is open on win, expected none at a fence");
  }
  // Publishes this rank's stores (its own window included) before the others proceed, and sees
  // theirs after: the barrier's messages order the two.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (int rc = PMPI_Barrier(win->comm); rc != MPI_SUCCESS) return rc;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  e.fence_open = (assert& MPI_MODE_NOSUCCEED) == 0;
  e.access = e.fence_open ? Access::fence : Access::none;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_fence);

extern "C" int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  (void)assert;  // the assertions only allow shortcuts weft's post does not need
  if (int rc = check_win(win, "MPI_Win_post"); rc != MPI_SUCCESS) return rc;
  weft::mpi::rma::Epochs& e = win->epochs;
  if (e.exposed) {
    return raise(win, "MPI_Win_post", MPI_ERR_RMA_SYNC,
                 "win is already exposed by an earlier MPI_Win_post not yet closed by "
                 "MPI_Win_wait");
  }
  std::vector<int> origins;
  if (int rc = ranks_of(*win, group, "MPI_Win_post", origins); rc != MPI_SUCCESS) return rc;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int origin : origins) {
    // release: this rank's stores to its window come before the origins' accesses.
    win->control.posts(origin, win->rank).fetch_add(1, std::memory_order_release);
  }
  e.post_group = std::move(origins);
  e.exposed = true;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_post);

extern "C" int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_start"); rc != MPI_SUCCESS) return rc;
  weft::mpi::rma::Epochs& e = win->epochs;
  if (e.access == Access::pscw) {
    return raise(win, "MPI_Win_start", MPI_ERR_RMA_SYNC,
                 "an access epoch of MPI_Win_start is already open, expected MPI_Win_complete "
                 "first");
  }
  std::vector<int> targets;
  if (int rc = ranks_of(*win, group, "MPI_Win_start", targets); rc != MPI_SUCCESS) return rc;
  for (int target : targets) {
    const std::uint64_t seen = ++e.posts_seen[static_cast<std::size_t>(target)];
    if ((assert& MPI_MODE_NOCHECK) != 0) continue;
    const weft::mpi::BlockedCall call = weft::mpi::blocked_named("MPI_Win_start", "target", target);
    const weft::mpi::BlockedScope blocked(call);
    // acquire: the target's stores before its post are visible to this epoch's accesses.
    wait_until([&] {
      return win->control.posts(win->rank, target).load(std::memory_order_acquire) >= seen;
    });
  }
  e.start_group = std::move(targets);
  e.access = Access::pscw;
  e.fence_open = false;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_start);

extern "C" int PMPI_Win_complete(MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_complete"); rc != MPI_SUCCESS) return rc;
  weft::mpi::rma::Epochs& e = win->epochs;
  if (e.access != Access::pscw) {
    return raise(win, "MPI_Win_complete", MPI_ERR_RMA_SYNC,
                 "no access epoch of MPI_Win_start is open on win");
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int target : e.start_group) {
    // release: this epoch's stores into the target's memory come before its wait returns.
    win->control.completes(target).fetch_add(1, std::memory_order_release);
  }
  e.start_group.clear();
  e.access = Access::none;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_complete);

namespace {

int close_exposure(MPI_Win win, std::string_view function, bool block, int* flag) {
  if (int rc = check_win(win, function); rc != MPI_SUCCESS) return rc;
  weft::mpi::rma::Epochs& e = win->epochs;
  if (!e.exposed) {
    return raise(win, function, MPI_ERR_RMA_SYNC,
                 "no exposure epoch of MPI_Win_post is open on win");
  }
  const std::uint64_t expected = e.completes_seen + e.post_group.size();
  // acquire: the origins' stores before their completes are visible after the wait.
  auto all_completed = [&] {
    return win->control.completes(win->rank).load(std::memory_order_acquire) >= expected;
  };
  if (block) {
    // Named with how many origins the exposure waits for (MPI_Win_wait, the one caller that
    // blocks).
    const weft::mpi::BlockedCall call =
        weft::mpi::blocked_named("MPI_Win_wait", "origins", static_cast<int>(e.post_group.size()));
    const weft::mpi::BlockedScope blocked(call);
    wait_until(all_completed);
  } else if (!all_completed()) {
    *flag = 0;
    weft::mpi::after_failed_test();
    return MPI_SUCCESS;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  e.completes_seen = expected;
  e.post_group.clear();
  e.exposed = false;
  if (flag != nullptr) *flag = 1;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Win_wait(MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return close_exposure(win, "MPI_Win_wait", true, nullptr);
}
WEFT_MPI_ALIAS(MPI_Win_wait);

extern "C" int PMPI_Win_test(MPI_Win win, int* flag) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (flag == nullptr) {
    if (int rc = check_win(win, "MPI_Win_test"); rc != MPI_SUCCESS) return rc;
    return raise(win, "MPI_Win_test", MPI_ERR_ARG, "flag = NULL, expected where to store it");
  }
  return close_exposure(win, "MPI_Win_test", false, flag);
}
WEFT_MPI_ALIAS(MPI_Win_test);
