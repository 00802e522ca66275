// Every user thread of the running scheduler as one look saw it: type, rank, state, core, what it
// waits on and, for a thread that is not running, its backtrace from its saved context. What a
// stack dump (weft-info stacks, SIGQUIT to weftrun) prints and what the MPI deadlock report
// reads to prove that every rank is parked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "weft/thread.h"
#include "weft/thread_type.h"

namespace weft {

struct ThreadSnapshot {
  enum class State : std::uint8_t {
    running,    // on a virtual processor now
    runnable,   // queued, waiting for its turn
    switching,  // between announcing a park and being switched out
    parked,     // switched out until a wake-up
  };
  std::uint64_t id = 0;
  ThreadType type = ThreadType::user;
  int rank = -1;
  State state = State::running;
  int vp = -1;    // the virtual processor running it, or that last ran it
  int core = -1;  // that processor's topology core
  // Where the thread was placed when spawned: pinned to a processor, on a NUMA node, or free
  // (started on a processor and stealable).
  Placement placement;
  // Bumped at every park: the same epoch and `parked` in two looks mean that the thread did not
  // run in between.
  std::uint64_t park_epoch = 0;
  // What this_thread::set_wait_note() last set, read while the thread stayed parked in
  // `park_epoch` (null otherwise or when it set none).
  const void* wait_note = nullptr;
  // The note of a thread that is not parked: one in a wait that yields rather than parks (MPI's
  // RMA synchronization). Read without the park word's guard, so only a note of plain values may
  // be read through it, and only while still_noted() holds.
  const void* running_note = nullptr;
  // Innermost frame first, "function+0xoffset (object)"; empty for a running thread, or when the
  // thread woke while it was read.
  std::vector<std::string> backtrace;
  const void* handle = nullptr;  // the thread's control block, for still_parked()
};

// Every live user thread of the running scheduler (none outside one). `backtraces`: unwind each
// parked or queued thread's stack from its saved registers (libunwind, loaded on first use).
std::vector<ThreadSnapshot> snapshot_threads(bool backtraces);

// Whether `thread` is still parked in the park the snapshot saw.
bool still_parked(const ThreadSnapshot& thread);

// Whether `thread` still holds the note the snapshot saw as its running_note (it left the wait
// otherwise: a wait restores the previous note before its frame goes).
bool still_noted(const ThreadSnapshot& thread);

// Copies `size` bytes of `note`, the snapshot's wait_note or running_note of `thread`, into
// `out`; true when the copy is whole: the thread stayed in the park (or kept the note) across
// it. The note lives in the thread's frame, which a woken thread overwrites at once, so the copy
// is validated after it is made, never trusted before.
bool copy_note(const ThreadSnapshot& thread, const void* note, void* out, std::size_t size);

// Kernel threads that ranks started (pthread_create, std::thread) and that still run: unseen by
// the scheduler, they may call MPI at any moment.
int rank_kernel_threads();

// Whether a thread of the running scheduler waits with a deadline (a sleep, a timed wait): it
// will wake by itself.
bool timers_pending();

// Text of a snapshot, one block per thread: "thread 12 (mpi_task, rank 3) parked, last on core 1
// (vp 1)", then "  waits in ..." when describe_note(thread) has something to say (it is called
// for threads with a note, wait_note or running_note, only), then the frames.
std::string format_threads(
    const std::vector<ThreadSnapshot>& threads,
    const std::function<std::string(const ThreadSnapshot& thread)>& describe_note);

const char* to_string(ThreadSnapshot::State state);

// Where a process running a job and `weft-info stacks` meet: while it answers SIGQUIT the process
// holds an abstract Unix socket named ready(pid) (listed in /proc/net/unix, gone with the process
// however it ends); weft-info creates request(pid) before it sends SIGQUIT, and the process then
// writes its dump to output(pid) instead of its standard error. A request file holding
// kPlacementRequest asks for the threads' placement (weft-info placement --pid) instead.
namespace stack_files {
inline std::string directory() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}
inline std::string ready(int pid) {
  return "weft-stacks-" + std::to_string(pid);
}
inline std::string request(int pid) {
  return directory() + "/weft-stacks-" + std::to_string(pid) + ".request";
}
inline std::string output(int pid) {
  return directory() + "/weft-stacks-" + std::to_string(pid) + ".out";
}
inline constexpr const char* kPlacementRequest = "placement";
}  // namespace stack_files

// The first member of every wait note: the name of what the thread waits in, a string literal
// (the crash report, which may not allocate, prints this much of the notes).
struct WaitNoteName {
  const char* name = "";
  std::size_t size = 0;
};

namespace this_thread {
// Says what the calling user thread waits on while it blocks, for thread dumps and the deadlock
// report (MPI sets a record of the call and its arguments); null to clear. Returns the previous
// note, which the caller restores. The note must outlive the wait. No-op outside weft.
const void* set_wait_note(const void* note) noexcept;
}  // namespace this_thread

}  // namespace weft
