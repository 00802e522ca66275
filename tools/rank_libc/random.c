/* rand, srand, random, srandom, initstate and setstate with one generator per rank: the state
 * lives in the rank's copy of the program. glibc's reentrant functions do the arithmetic, so a
 * rank draws exactly the numbers a process draws from glibc (the same additive feedback
 * generator, seeded with 1 until the program seeds it). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "rank_lock.h"

/* glibc's default: a degree-31 generator in 128 bytes of state (one word of it is the type). */
enum { kDefaultStateBytes = 128 };

static rank_lock lock = RANK_LOCK_INIT;
static struct random_data generator;
static int32_t default_state[kDefaultStateBytes / sizeof(int32_t)];
static int seeded;

/* Requires the lock. Sets up glibc's starting state, as if initstate(1, state, 128). */
static void ensure_seeded(void) {
  if (seeded) return;
  initstate_r(1, (char*)default_state, sizeof default_state, &generator);
  seeded = 1;
}

__attribute__((weak)) long random(void) {
  int32_t result;
  rank_lock_acquire(&lock);
  ensure_seeded();
  random_r(&generator, &result);
  rank_lock_release(&lock);
  return result;
}

__attribute__((weak)) void srandom(unsigned int seed) {
  rank_lock_acquire(&lock);
  ensure_seeded();
  srandom_r(seed, &generator);
  rank_lock_release(&lock);
}

/* The previous state, as the argument setstate takes (the word in front of the numbers holds the
 * generator's type and position); NULL when glibc refuses the new one. */
__attribute__((weak)) char* initstate(unsigned int seed, char* state, size_t size) {
  rank_lock_acquire(&lock);
  ensure_seeded();
  char* previous = (char*)&generator.state[-1];
  if (initstate_r(seed, state, size, &generator) < 0) previous = NULL;
  rank_lock_release(&lock);
  return previous;
}

__attribute__((weak)) char* setstate(char* state) {
  rank_lock_acquire(&lock);
  ensure_seeded();
  char* previous = (char*)&generator.state[-1];
  if (setstate_r(state, &generator) < 0) previous = NULL;
  rank_lock_release(&lock);
  return previous;
}

__attribute__((weak)) int rand(void) {
  return (int)random();
}

__attribute__((weak)) void srand(unsigned int seed) {
  srandom(seed);
}
