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
#include <cstdint>
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

// pthread_create as the program sees it: the first definition in the global lookup order, which
// is ThreadSanitizer's interceptor in a TSan build (it must see every thread start, or the
// thread runs instrumented code on a ThreadState it never set up) and ours below otherwise. A
// plain call from this library would not do: it is linked with -Bsymbolic-functions and
// compiled with -fno-semantic-interposition, so the call binds to our own definition directly.
PthreadCreate program_pthread_create() noexcept {
  static const auto function = [] {
    void* symbol = ::dlsym(RTLD_DEFAULT, "pthread_create");
    if (symbol == nullptr) fatal("cannot find pthread_create()");
    return reinterpret_cast<PthreadCreate>(symbol);
  }();
  return function;
}

// What the new thread needs before it runs its start routine; freed when it ends.
struct Launch {
  void* (*start)(void*);
  void* argument;
  int rank;
};

// Kernel threads that ranks started and that have not ended: they may call MPI at any moment,
// unseen by the scheduler, so no deadlock is proven while there are any. relaxed: a count.
std::atomic<int> live_rank_threads{0};

// Counts the thread out and frees its Launch when it ends, however it ends (return,
// pthread_exit): a key's destructor, set by start_pthread, which may not register a
// thread_local's destructor (that allocates).
void rank_thread_ended(void* launch) {
  live_rank_threads.fetch_sub(1, std::memory_order_relaxed);
  delete static_cast<Launch*>(launch);
}

pthread_key_t launch_key;

void make_launch_key() {
  static const bool made = [] {
    if (::pthread_key_create(&launch_key, &rank_thread_ended) != 0) {
      fatal("cannot create the key that counts the threads ranks start");
    }
    return true;
  }();
  (void)made;
}

// The rank a thread started now by the caller belongs to, -1 for none.
int rank_to_inherit() noexcept {
  return creating_runtime_thread ? -1 : this_thread::rank();
}

// The first code of a kernel thread a rank started. Under ThreadSanitizer, whose interceptor of
// pthread_create comes before ours, `start` is TSan's own start of the thread: until it runs
// the thread is unknown to TSan, and instrumented code or an allocation here would use TSan's
// state of a thread it never set up (it crashed). So nothing here is instrumented, and nothing
// allocates: glibc keeps the slots of the first 32 keys, this early one among them, in the
// thread's own block.
__attribute__((no_sanitize("thread"))) void* start_pthread(void* context) {
  auto* launch = static_cast<Launch*>(context);
  inherited_rank = launch->rank;
  ::pthread_setspecific(launch_key, launch);
  return launch->start(launch->argument);
}

// A C11 thread of a rank, run as a pthread (glibc's thrd_create is pthread_create with the int
// result carried in the pointer, which thrd_join takes back).
struct Thrd {
  thrd_start_t start;
  void* argument;
};

void* start_thrd(void* context) {
  const Thrd thrd = *static_cast<Thrd*>(context);
  delete static_cast<Thrd*>(context);
  return reinterpret_cast<void*>(static_cast<std::intptr_t>(thrd.start(thrd.argument)));
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
  make_launch_key();
  auto* launch = new (std::nothrow) Launch{start, argument, rank};
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
  if (rank_to_inherit() < 0) return real_thrd_create()(thread, start, argument);
  auto* thrd = new (std::nothrow) Thrd{start, argument};
  if (thrd == nullptr) return thrd_nomem;
  // pthread_create as the program sees it: a ThreadSanitizer build has an interceptor for it
  // (none for thrd_create, whose threads it would not know), which then reaches ours.
  const int result = program_pthread_create()(thread, nullptr, &start_thrd, thrd);
  if (result == 0) return thrd_success;
  delete thrd;
  return result == ENOMEM ? thrd_nomem : thrd_error;
}
