// A lock in one word of the program's memory (omp_lock_t, a named critical section's slot): taken
// with a compare-and-swap. A waiter spins a short budget yielding its core, then sleeps on one of
// a fixed set of Signals chosen by the word's address (a parking lot), which the unlocker
// notifies: the word is the program's, so no weft object is allocated or freed for a lock.
#pragma once

#include <atomic>

#include "signal.h"

namespace weft::omp {

// The Signal that waiters for the lock word at `address` sleep on.
Signal& parking_signal(const void* address);

template <class Word>
bool try_lock_word(Word& word) {
  std::atomic_ref<Word> lock(word);
  Word expected = 0;
  // acquire: the critical section sees what the previous holder wrote.
  return lock.load(std::memory_order_relaxed) == 0 &&
         lock.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                      std::memory_order_relaxed);
}

template <class Word>
void lock_word(Word& word) {
  if (try_lock_word(word)) return;
  parking_signal(&word).wait([&word] { return try_lock_word(word); });
}

template <class Word>
void unlock_word(Word& word) {
  // release: publishes the critical section to the next holder.
  std::atomic_ref<Word>(word).store(0, std::memory_order_release);
  parking_signal(&word).notify();
}

}  // namespace weft::omp
