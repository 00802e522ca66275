// A lock in one word of the program's memory (omp_lock_t, a named critical section's slot), so
// that no weft object is allocated or freed for a lock. Taking a free lock and releasing one
// nobody waits for are one compare-and-swap each. A waiter spins a few rounds while nobody is
// parked, then parks in the parking lot (parking_lot.h) under the word's address; an unlock wakes
// at most one waiter, and none while a woken one has not retried yet.
//
// Why this shape. With more threads than cores, every thread that polls the word takes its cache
// line from the holder, and every waiter woken at once (a shared Signal's notify_all) comes to
// poll it; what goes fastest is the holder taking the lock again and again from its own cache
// while the others sleep, and exactly one of them at a time coming to look (Go's sync.Mutex; the
// futex mutexes of glibc and libgomp wake one per unlock). weft does not preempt, so a holder that
// loops could keep a waiter out for as long as it runs: about once a millisecond an unlock hands
// the lock to the oldest waiter instead (parking_lot.h, WebKit's eventual fairness), which bounds
// the wait without turning every unlock into a hand-off, whose cost is the waiter's wake-up.
#pragma once

#include <atomic>

namespace weft::omp {

// The word's bits; 0 is a free lock nobody waits for (omp_init_lock's value).
namespace lock_bits {
inline constexpr unsigned kLocked = 1;  // held
inline constexpr unsigned kParked = 2;  // waiters may be parked on the word's address
inline constexpr unsigned kWoken = 4;   // a woken waiter has not retried yet: wake nobody else
}  // namespace lock_bits

template <class Word>
bool try_lock_word(Word& word) {
  std::atomic_ref<Word> lock(word);
  // A load first: a thread polling omp_test_lock must not take the line from the holder.
  Word state = lock.load(std::memory_order_relaxed);
  while ((state & lock_bits::kLocked) == 0) {
    // acquire: the critical section sees what the previous holder wrote.
    if (lock.compare_exchange_weak(state, state | lock_bits::kLocked, std::memory_order_acquire,
                                   std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

template <class Word>
void lock_word_slow(Word& word);
template <class Word>
void unlock_word_slow(Word& word);

template <class Word>
void lock_word(Word& word) {
  Word expected = 0;
  // acquire: as in try_lock_word.
  if (std::atomic_ref<Word>(word).compare_exchange_strong(
          expected, lock_bits::kLocked, std::memory_order_acquire, std::memory_order_relaxed)) {
    return;
  }
  lock_word_slow(word);
}

template <class Word>
void unlock_word(Word& word) {
  Word expected = lock_bits::kLocked;
  // release: publishes the critical section to the next holder.
  if (std::atomic_ref<Word>(word).compare_exchange_strong(expected, 0, std::memory_order_release,
                                                          std::memory_order_relaxed)) {
    return;
  }
  unlock_word_slow(word);
}

}  // namespace weft::omp
