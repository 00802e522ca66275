/* The 48-bit linear congruential generators (drand48, lrand48, mrand48, the *rand48 that take
 * their own seed, srand48, seed48, lcong48), one state per rank: erand48, nrand48 and jrand48
 * keep the caller's seed but the multiplier lcong48 set, which is part of the state. glibc's
 * reentrant functions do the arithmetic, so a rank draws what a process draws. A zero state is
 * glibc's unseeded one. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "rank_lock.h"

static rank_lock lock = RANK_LOCK_INIT;
static struct drand48_data generator;

__attribute__((weak)) double drand48(void) {
  double result;
  rank_lock_acquire(&lock);
  drand48_r(&generator, &result);
  rank_lock_release(&lock);
  return result;
}

__attribute__((weak)) double erand48(unsigned short xsubi[3]) {
  double result;
  rank_lock_acquire(&lock);
  erand48_r(xsubi, &generator, &result);
  rank_lock_release(&lock);
  return result;
}

__attribute__((weak)) long lrand48(void) {
  long result;
  rank_lock_acquire(&lock);
  lrand48_r(&generator, &result);
  rank_lock_release(&lock);
  return result;
}

__attribute__((weak)) long nrand48(unsigned short xsubi[3]) {
  long result;
  rank_lock_acquire(&lock);
  nrand48_r(xsubi, &generator, &result);
  rank_lock_release(&lock);
  return result;
}

__attribute__((weak)) long mrand48(void) {
  long result;
  rank_lock_acquire(&lock);
  mrand48_r(&generator, &result);
  rank_lock_release(&lock);
  return result;
}

__attribute__((weak)) long jrand48(unsigned short xsubi[3]) {
  long result;
  rank_lock_acquire(&lock);
  jrand48_r(xsubi, &generator, &result);
  rank_lock_release(&lock);
  return result;
}

__attribute__((weak)) void srand48(long seed) {
  rank_lock_acquire(&lock);
  srand48_r(seed, &generator);
  rank_lock_release(&lock);
}

/* The previous seed, in the rank's state: glibc returns its static copy of it likewise. */
__attribute__((weak)) unsigned short* seed48(unsigned short seed16v[3]) {
  rank_lock_acquire(&lock);
  seed48_r(seed16v, &generator);
  rank_lock_release(&lock);
  return generator.__old_x;
}

__attribute__((weak)) void lcong48(unsigned short param[7]) {
  rank_lock_acquire(&lock);
  lcong48_r(param, &generator);
  rank_lock_release(&lock);
}
