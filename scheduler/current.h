// Access to the calling kernel thread's virtual processor. The accessor is an out-of-line
// function with a compiler barrier: a user thread may resume on another kernel thread after any
// switch, and a thread_local address the compiler cached before the switch would then point at
// the previous kernel thread's slot.
#pragma once

namespace weft::detail {

class VirtualProcessor;

VirtualProcessor* current_vp() noexcept;
void set_current_vp(VirtualProcessor* vp) noexcept;

}  // namespace weft::detail
