#include "current.h"

namespace weft::detail {

// The attributes again: GCC takes the TLS model of the definition, and without them here every
// access went through __tls_get_addr (relaxed by the linker, still 6 instructions a read).
[[gnu::tls_model("initial-exec"),
  gnu::visibility("hidden")]] constinit thread_local VirtualProcessor* tls_vp = nullptr;

__attribute__((noinline)) VirtualProcessor* current_vp() noexcept {
  // The empty asm keeps the compiler from treating the TLS address as loop-invariant across
  // inlined callers (with LTO) and from folding two calls separated by a context switch.
  asm volatile("" ::: "memory");
  return tls_vp;
}

__attribute__((noinline)) void set_current_vp(VirtualProcessor* vp) noexcept {
  asm volatile("" ::: "memory");
  tls_vp = vp;
}

}  // namespace weft::detail
