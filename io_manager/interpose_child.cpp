// system and pclose from a user thread. Each waits for its child inside the C library, with the
// C library's own wait rather than the waitpid libweft defines (interpose_handoff.cpp), which
// would freeze the core, and every other thread on it, until the child ends. A spare kernel
// thread makes the whole call while the caller is parked. popen and posix_spawn stay the C
// library's: they return as soon as the child has called exec (glibc starts it with
// CLONE_VFORK), and the program's waitpid that follows posix_spawn is libweft's.
#include <stdio.h>
#include <stdlib.h>

#include "blocking_call.h"
#include "libc.h"

using weft::io::detail::Manager;
using weft::io::detail::on_spare_thread;
using weft::io::detail::waiting_manager;
namespace libc = weft::io::libc;

extern "C" {

int system(const char* command) {
  Manager* manager = waiting_manager();
  // A null command only asks whether there is a shell: no child to wait for.
  if (manager == nullptr || command == nullptr) return libc::system(command);
  return on_spare_thread(*manager, [=] { return libc::system(command); });
}

int pclose(FILE* stream) {
  Manager* manager = waiting_manager();
  if (manager == nullptr) return libc::pclose(stream);
  return on_spare_thread(*manager, [=] { return libc::pclose(stream); });
}

}  // extern "C"
