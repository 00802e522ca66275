#include "current.h"

namespace weft::detail {

namespace {
// initial-exec: libweft is loaded with the program, never dlopen'ed later, so the variable can sit
// at a fixed offset from the thread pointer instead of going through __tls_get_addr.
__attribute__((tls_model("initial-exec"))) thread_local VirtualProcessor* tls_vp = nullptr;
}  // namespace

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
