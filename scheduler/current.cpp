#include "current.h"

namespace weft::detail {

constinit thread_local VirtualProcessor* tls_vp = nullptr;

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
