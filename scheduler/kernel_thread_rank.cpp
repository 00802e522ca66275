// pthread_create and thrd_create as libweft defines them for every program linked with it (named
// ahead of the C library, so std::thread and other libraries come here too): a kernel thread
// started by a thread that has a rank carries that rank from its first instruction. Every other
// creation is the C library's, unchanged.
#include "kernel_thread_rank.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/lib-names.h>
#include <pthread.h>
#include <threads.h>

#include <atomic>
#include <new>
#include <string>

#include "weft/error.h"
#include "weft/this_thread.h"

namespace weft::detail {

namespace {

// initial-exec, as current.cpp's: libweft is loaded with the program.
__attribute__((tls_model("initial-exec"))) thread_local int inherited_rank = -1;
__attribute__((tls_model("initial-exec"))) thread_local bool creating_runtime_thread = false;

// The C library's definition, looked up in the C library itself (see io_manager/libc.cpp).
void* libc_function(const char* name) noexcept {
  static void* const library = ::dlopen(LIBC_SO, RTLD_NOW | RTLD_NOLOAD);
  void* symbol = library != nullptr ? ::dlsym(library, name) : nullptr;
  if (symbol == nullptr) fatal(std::string("cannot find the C library's ") + name + "()");
  return symbol;
}

using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using ThrdCreate = int (*)(thrd_t*, thrd_start_t, void*);

// Every thread resolves the same address, so a race only repeats the lookup.
PthreadCreate real_pthread_create() noexcept {
  static const auto function = reinterpret_cast<PthreadCreate>(libc_function("pthread_create"));
  return function;
}

ThrdCreate real_thrd_create() noexcept {
  static const auto function = reinterpret_cast<ThrdCreate>(libc_function("thrd_create"));
  return function;
}

// What the new thread needs before it runs its start routine; freed by it.
template <class Start>
struct Launch {
  Start start;
  void* argument;
  int rank;
};

// Kernel threads that ranks started and that have not ended: they may call MPI at any moment,
// unseen by the scheduler, so no deadlock is proven while there are any. relaxed: a count.
std::atomic<int> live_rank_threads{0};

// Counts the calling thread out when it ends, however it ends (return, pthread_exit).
struct CountedOut {
  ~CountedOut() { live_rank_threads.fetch_sub(1, std::memory_order_relaxed); }
};

// The rank a thread started now by the caller belongs to, -1 for none.
int rank_to_inherit() noexcept {
  return creating_runtime_thread ? -1 : this_thread::rank();
}

void* start_pthread(void* context) {
  const Launch<void* (*)(void*)> launch = *static_cast<Launch<void* (*)(void*)>*>(context);
  delete static_cast<Launch<void* (*)(void*)>*>(context);
  inherited_rank = launch.rank;
  static thread_local CountedOut counted;
  (void)counted;
  return launch.start(launch.argument);
}

int start_thrd(void* context) {
  const Launch<thrd_start_t> launch = *static_cast<Launch<thrd_start_t>*>(context);
  delete static_cast<Launch<thrd_start_t>*>(context);
  inherited_rank = launch.rank;
  static thread_local CountedOut counted;
  (void)counted;
  return launch.start(launch.argument);
}

}  // namespace

int kernel_thread_rank() noexcept {
  return inherited_rank;
}

int live_rank_kernel_threads() noexcept {
  return live_rank_threads.load(std::memory_order_relaxed);
}

RuntimeThreadCreation::RuntimeThreadCreation() noexcept : outer_(!creating_runtime_thread) {
  creating_runtime_thread = true;
}

RuntimeThreadCreation::~RuntimeThreadCreation() {
  if (outer_) creating_runtime_thread = false;
}

}  // namespace weft::detail

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* argument) {
  using namespace weft::detail;
  const int rank = rank_to_inherit();
  if (rank < 0) return real_pthread_create()(thread, attr, start, argument);
  auto* launch = new (std::nothrow) Launch<void* (*)(void*)>{start, argument, rank};
  if (launch == nullptr) return EAGAIN;
  live_rank_threads.fetch_add(1, std::memory_order_relaxed);
  const int result = real_pthread_create()(thread, attr, &start_pthread, launch);
  if (result != 0) {
    live_rank_threads.fetch_sub(1, std::memory_order_relaxed);
    delete launch;
  }
  return result;
}

extern "C" int thrd_create(thrd_t* thread, thrd_start_t start, void* argument) {
  using namespace weft::detail;
  const int rank = rank_to_inherit();
  if (rank < 0) return real_thrd_create()(thread, start, argument);
  auto* launch = new (std::nothrow) Launch<thrd_start_t>{start, argument, rank};
  if (launch == nullptr) return thrd_nomem;
  live_rank_threads.fetch_add(1, std::memory_order_relaxed);
  const int result = real_thrd_create()(thread, &start_thrd, launch);
  if (result != thrd_success) {
    live_rank_threads.fetch_sub(1, std::memory_order_relaxed);
    delete launch;
  }
  return result;
}
