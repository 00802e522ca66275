// A lock in one word of the program's memory (omp_lock_t, a named critical section's slot): taken
// with a compare-and-swap, waited for the weft way (spin, then park while the core retries for
// the waiter). The word is the program's, so no weft object has to be allocated or freed for it.
#pragma once

#include <atomic>

#include "wait.h"

namespace weft::omp {

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
  wait_for([&word] { return try_lock_word(word); });
}

template <class Word>
void unlock_word(Word& word) {
  // release: publishes the critical section to the next holder.
  std::atomic_ref<Word>(word).store(0, std::memory_order_release);
}

}  // namespace weft::omp
