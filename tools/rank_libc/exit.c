/* exit, _exit and _Exit of a rank image: they end the calling rank, not the process
 * (docs/privatization.md, "A rank's exit"). libweft's weft_rank_exit returns to where the rank's
 * main was called; the loader then runs the copy's finalizers, hence (through the one handler
 * this file registers with glibc) the rank's atexit handlers and static destructors, unless the
 * rank ended by _exit or _Exit. Called from another thread than the rank's own, or in a child of
 * fork, they are glibc's.
 *
 * The rank's handlers (atexit, and __cxa_atexit, which C++ static destructors use) are kept
 * here, in the copy, because glibc offers no way to drop handlers once registered: a rank that
 * called _exit must never run them, not even when the process exits. Weak definitions, as the
 * archive's others. */
#include <stdlib.h>
#include <unistd.h>

#include "rank_lock.h"

/* libweft (mpi/init/rank_exit.cpp). */
extern void weft_rank_exit(int status, int run_handlers) __attribute__((noreturn));
extern int weft_rank_register_exit_runner(void (*runner)(void*), void* dso);

extern void* __dso_handle;

struct handler {
  void (*function)(void*);
  void* argument;
};

static rank_lock handlers_lock = RANK_LOCK_INIT;
static struct handler* handlers;
static size_t handler_count, handler_capacity;
static int runner_registered;
static int handlers_dropped; /* set by _exit: the handlers never run */

/* Registered with glibc under this copy's __dso_handle: the copy's finalizers (a rank's end) or
 * the process's exit run it once. Last registered first; a handler may register another. */
static void run_handlers(void* unused) {
  (void)unused;
  for (;;) {
    rank_lock_acquire(&handlers_lock);
    if (handlers_dropped || handler_count == 0) {
      rank_lock_release(&handlers_lock);
      return;
    }
    const struct handler last = handlers[--handler_count];
    rank_lock_release(&handlers_lock);
    last.function(last.argument);
  }
}

__attribute__((weak)) int __cxa_atexit(void (*function)(void*), void* argument, void* dso) {
  (void)dso; /* the copy's code registers only for the copy */
  rank_lock_acquire(&handlers_lock);
  if (handler_count == handler_capacity) {
    const size_t capacity = handler_capacity == 0 ? 32 : 2 * handler_capacity;
    struct handler* grown = realloc(handlers, capacity * sizeof *grown);
    if (grown == NULL) {
      rank_lock_release(&handlers_lock);
      return -1;
    }
    handlers = grown;
    handler_capacity = capacity;
  }
  handlers[handler_count++] = (struct handler){function, argument};
  const int first = !runner_registered;
  runner_registered = 1;
  rank_lock_release(&handlers_lock);
  return first ? weft_rank_register_exit_runner(run_handlers, &__dso_handle) : 0;
}

__attribute__((weak)) int atexit(void (*function)(void)) {
  return __cxa_atexit((void (*)(void*))function, NULL, &__dso_handle);
}

__attribute__((weak, noreturn)) void exit(int status) {
  weft_rank_exit(status, 1);
}

static void __attribute__((noreturn)) quick_exit_rank(int status) {
  rank_lock_acquire(&handlers_lock);
  handlers_dropped = 1;
  rank_lock_release(&handlers_lock);
  weft_rank_exit(status, 0);
}

__attribute__((weak, noreturn)) void _exit(int status) {
  quick_exit_rank(status);
}
__attribute__((weak, noreturn)) void _Exit(int status) {
  quick_exit_rank(status);
}
