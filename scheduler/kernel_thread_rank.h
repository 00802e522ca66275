// The rank of a kernel thread outside weft's scheduler: the rank of the thread that started it
// (pthread_create, std::thread, thrd_create), so that a thread a rank starts belongs to that
// rank, as a thread belongs to its process (docs/architecture.md, "Threads a rank starts").
#pragma once

namespace weft::detail {

// The calling kernel thread's rank; -1 when its creator had none.
int kernel_thread_rank() noexcept;
// Kernel threads started by ranks that have not ended yet.
int live_rank_kernel_threads() noexcept;

// While it lives, the kernel threads that the calling thread starts belong to no rank: for the
// runtime's own threads (the I/O manager's spare threads), which a rank's call may start.
class RuntimeThreadCreation {
 public:
  RuntimeThreadCreation() noexcept;
  ~RuntimeThreadCreation();
  RuntimeThreadCreation(const RuntimeThreadCreation&) = delete;
  RuntimeThreadCreation& operator=(const RuntimeThreadCreation&) = delete;

 private:
  bool outer_;
};

}  // namespace weft::detail
