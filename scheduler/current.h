// Access to the calling kernel thread's virtual processor. The accessor is an out-of-line
// function with a compiler barrier: a user thread may resume on another kernel thread after any
// switch, and a thread_local address the compiler cached before the switch would then point at
// the previous kernel thread's slot.
#pragma once

namespace weft::detail {

class VirtualProcessor;

VirtualProcessor* current_vp() noexcept;
void set_current_vp(VirtualProcessor* vp) noexcept;

// initial-exec: libweft is loaded with the program, never dlopen'ed later, so the variable can sit
// at a fixed offset from the thread pointer instead of going through __tls_get_addr.
[[gnu::tls_model("initial-exec"),
  gnu::visibility("hidden")]] extern constinit thread_local VirtualProcessor* tls_vp;

// current_vp() inline, for a caller that makes no switch (and so cannot move to another kernel
// thread) between this read and the uses of its result: this_thread::yield's prepare_yield.
inline VirtualProcessor* current_vp_before_switch() noexcept {
  return tls_vp;
}

}  // namespace weft::detail
