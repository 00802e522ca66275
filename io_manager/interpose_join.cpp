// pthread_join and thrd_join (std::thread::join comes here too) for user threads: a rank that
// joins a kernel thread it started must not freeze its core, since that thread may wait for a
// rank of the same core (a message, a collective). A join that would block is made by a spare
// kernel thread while the caller is parked. Every other caller gets the C library's call.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <threads.h>

#include "blocking_call.h"
#include "libc.h"

using weft::io::detail::Manager;
using weft::io::detail::on_spare_thread;
using weft::io::detail::waiting_manager;
namespace libc = weft::io::libc;

extern "C" {

int pthread_join(pthread_t thread, void** value) {
  Manager* manager = waiting_manager();
  if (manager == nullptr) return libc::pthread_join(thread, value);
  // The C library's own: under ThreadSanitizer this pthread_join is reached through TSan's, which
  // accounts for the join; TSan's pthread_tryjoin_np would account for it a second time.
  const int now = libc::pthread_tryjoin_np(thread, value);
  if (now != EBUSY) return now;
  return on_spare_thread(*manager, [=] { return libc::pthread_join(thread, value); });
}

// glibc's thrd_join is its pthread_join with the int result carried in the pointer. The join is
// pthread_join as the program sees it, the first definition in the global lookup order: under
// ThreadSanitizer its interceptor, which must see the join (or the thread leaks for it and what
// the thread wrote races with the joiner), and which reaches ours above. A plain call would bind
// to ours directly (libweft is linked with -Bsymbolic-functions).
int thrd_join(thrd_t thread, int* result) {
  using Join = int (*)(pthread_t, void**);
  static const auto join = [] {
    void* symbol = ::dlsym(RTLD_DEFAULT, "pthread_join");
    return symbol != nullptr ? reinterpret_cast<Join>(symbol) : &pthread_join;
  }();
  void* value = nullptr;
  if (join(thread, &value) != 0) return thrd_error;
  if (result != nullptr) *result = static_cast<int>(reinterpret_cast<intptr_t>(value));
  return thrd_success;
}

}  // extern "C"
