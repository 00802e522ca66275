/* The lock of a rank's generator state: the rank's threads (its OpenMP workers, the pthreads it
 * starts) may draw numbers at once, as threads of a process do from glibc's locked generators.
 * The sections it guards are a few dozen instructions and make no call that could switch a weft
 * user thread out, so a spin suffices; sched_yield lets a kernel thread the OS preempted while
 * holding it finish. */
#ifndef WEFT_RANK_LOCK_H
#define WEFT_RANK_LOCK_H

#include <sched.h>
#include <stdatomic.h>

typedef struct {
  atomic_flag held;
} rank_lock;

#define RANK_LOCK_INIT \
  { ATOMIC_FLAG_INIT }

static inline void rank_lock_acquire(rank_lock* lock) {
  /* acquire: the holder before us published the state with its release. */
  while (atomic_flag_test_and_set_explicit(&lock->held, memory_order_acquire)) sched_yield();
}

static inline void rank_lock_release(rank_lock* lock) {
  atomic_flag_clear_explicit(&lock->held, memory_order_release);
}

#endif
