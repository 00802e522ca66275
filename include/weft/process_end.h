// The end of the whole process, which several threads may ask for at once (exit() from a rank's
// pthreads or OpenMP workers, a job ended by an error, the program's return once every rank has
// ended). The C library's exit is not made for that: lines buffered in stdout came out twice when
// several threads called it together. One thread ends the process; the others wait for it to be
// gone (docs/privatization.md, "A rank's exit").
#pragma once

#include <cstdint>

namespace weft {

// Returns to the one thread that ends the process: the first to call it, or that thread again (an
// exit handler that calls exit). Any other caller never returns: a user thread parks, so that
// its core goes on running others until the process ends, and a kernel thread sleeps. A child of
// fork starts with no claim.
void claim_process_end() noexcept;

// True once another thread than the caller has claimed the end of the process: what the caller
// then sees break (state that the exit handlers destroy) is a consequence of the end.
bool process_end_claimed_by_another() noexcept;

// The C library's exit (exit handlers, each stdio stream flushed once) by the thread that claims
// the end, once no other thread runs a rank's exit handlers (RankHandlersScope).
[[noreturn]] void end_process(int status) noexcept;

// While it lives, the calling thread runs the exit handlers of a rank that ends (its copy's
// finalizers). glibc runs each handler once: a thread that ends the process meanwhile would skip
// the ones this thread has taken and end before they are done (their output lost), so it waits
// for the scope to close first. Once that thread has found no scope open, a new one never
// returns (its thread waits for the end): glibc's exit, in that thread, runs the rank's handlers.
class RankHandlersScope {
 public:
  RankHandlersScope() noexcept;
  ~RankHandlersScope();
  RankHandlersScope(const RankHandlersScope&) = delete;
  RankHandlersScope& operator=(const RankHandlersScope&) = delete;

 private:
  std::uint64_t runner_;
};

}  // namespace weft
