// Thread-local storage (`__thread`, `thread_local`) that belongs to the user thread instead of the
// kernel thread, for the modules that ask for it. A rank's copy of the program registers its
// module at load: from then on each weft thread running the copy's code gets its own instance of
// the copy's thread-local variables, allocated at its first access and freed when the thread
// ends, wherever it runs and whoever shares its core. This is what makes OpenMP `threadprivate`
// (GCC emits `__thread`) right for workers sharing a core (docs/architecture.md, the TLS rule).
//
// Mechanism: code of a shared object reaches its dynamic TLS through `__tls_get_addr`, which
// libweft defines in front of the dynamic loader's. For a registered module called from a weft
// thread it returns that thread's block; everything else goes to the dynamic loader unchanged.
#pragma once

#include <cstddef>

namespace weft {

// `module_id` is the object's TLS module id (dlinfo RTLD_DI_TLS_MODID, nonzero). Call it after
// the object is loaded and before its code runs in a weft thread; never with a module that other
// kernel threads already use through the dynamic loader. Throws weft::Error for an id that names
// no loaded TLS module.
void give_each_thread_own_tls(std::size_t module_id);

}  // namespace weft
