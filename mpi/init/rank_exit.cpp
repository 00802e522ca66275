// A rank's exit: what exit() in one rank of a weft process does (docs/privatization.md, "A rank's
// exit"). A rank is a process to the program, so its exit ends the rank, not the process: the
// rank image's exit() calls weft_rank_exit, which jumps back to run_rank_main as a process's
// exit leaves its main, without unwinding (C frames have nothing to unwind, and main's C++
// frames may be noexcept, through which an exception would terminate).
#include <setjmp.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "init/fatal.h"
#include "init/world.h"
#include "weft/mpi_job.h"
#include "weft/process_end.h"
#include "weft/this_thread.h"

namespace weft::mpi {

namespace {

// Where a rank's exit returns to: the frame of run_rank_main in the rank's thread.
struct ExitPoint {
  jmp_buf jump;
  pid_t process = 0;  // a child of fork has the frame too, but not the rank
  RankEnd end;
};

// The exit points of the running ranks, by weft thread id. Looked up only when a rank exits.
class ExitPoints {
 public:
  void add(std::uint64_t thread, ExitPoint* point) {
    std::lock_guard guard(lock_);
    points_[thread] = point;
  }
  void remove(std::uint64_t thread) {
    std::lock_guard guard(lock_);
    points_.erase(thread);
  }
  ExitPoint* find(std::uint64_t thread) {
    std::lock_guard guard(lock_);
    const auto found = points_.find(thread);
    return found != points_.end() ? found->second : nullptr;
  }

 private:
  std::mutex lock_;
  std::unordered_map<std::uint64_t, ExitPoint*> points_;
};

ExitPoints& exit_points() {
  static ExitPoints points;
  return points;
}

// Removes the rank's exit point however run_rank_main leaves.
class ExitPointRegistration {
 public:
  ExitPointRegistration(std::uint64_t thread, ExitPoint* point) : thread_(thread) {
    exit_points().add(thread, point);
  }
  ~ExitPointRegistration() { exit_points().remove(thread_); }
  ExitPointRegistration(const ExitPointRegistration&) = delete;
  ExitPointRegistration& operator=(const ExitPointRegistration&) = delete;

 private:
  std::uint64_t thread_;
};

}  // namespace

RankEnd run_rank_main(RankMain main, int argc, char** argv, char** envp) {
  // On the heap: the jump back finds it through the registry, and nothing of this frame that
  // changes after setjmp is read after the jump.
  const auto point = std::make_unique<ExitPoint>();
  point->process = ::getpid();
  const ExitPointRegistration registration(this_thread::id(), point.get());
  if (setjmp(point->jump) == 0) point->end.status = main(argc, argv, envp);
  // A child of fork that returns from main ends as a process does: the rank is its parent's.
  if (::getpid() != point->process) weft::end_process(point->end.status);
  return point->end;
}

void rank_ended(int status) {
  const int rank = caller_world_rank();
  if (rank < 0 || world() == nullptr) return;
  if (status != 0) {
    end_job_deliberately("rank " + std::to_string(rank) + " exited with status " +
                             std::to_string(status) + "; the job ends with it",
                         status);
  }
  if (caller_state().world_model.load(std::memory_order_acquire) == RankState::Phase::initialized) {
    end_job_deliberately("rank " + std::to_string(rank) +
                             " exited without calling MPI_Finalize; the job ends with status 1",
                         1);
  }
}

}  // namespace weft::mpi

// glibc's, which the rank image's own __cxa_atexit (tools/rank_libc/exit.c) cannot reach: its
// references bind inside the image.
extern "C" int __cxa_atexit(void (*function)(void*), void* argument, void* dso);

extern "C" int weft_rank_register_exit_runner(void (*runner)(void*), void* dso) {
  return __cxa_atexit(runner, nullptr, dso);
}

extern "C" [[noreturn]] void weft_rank_exit(int status, int run_handlers) {
  weft::mpi::ExitPoint* point = nullptr;
  if (weft::this_thread::is_weft_thread()) {
    point = weft::mpi::exit_points().find(weft::this_thread::id());
  }
  if (point == nullptr || point->process != ::getpid()) {
    if (run_handlers != 0) weft::end_process(status);
    ::_exit(status);
  }
  point->end.status = status;
  point->end.run_handlers = run_handlers != 0;
  longjmp(point->jump, 1);
}
