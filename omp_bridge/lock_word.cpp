#include "lock_word.h"

#include <cstdint>

#include "parking_lot.h"
#include "weft/detail/spin_lock.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

namespace weft::omp {

using namespace lock_bits;

namespace {

// Spin rounds before parking. A round polls the word a few times, then yields: the holder may be
// a thread of this core (one that waits for something else while holding the lock), and weft
// does not preempt, so only a yield lets it run.
constexpr int kSpinRounds = 8;
constexpr int kPollsPerRound = 16;

template <class Word>
void spin_round(std::atomic_ref<Word> lock) {
  for (int i = 0; i < kPollsPerRound && (lock.load(std::memory_order_relaxed) & kLocked) != 0;
       ++i) {
    detail::spin_pause();
  }
  trace::mark_polling_yield();
  this_thread::yield();
}

}  // namespace

template <class Word>
void lock_word_slow(Word& word) {
  std::atomic_ref<Word> lock(word);
  bool woken = false;  // this thread was woken and holds kWoken until it takes the lock or parks
  for (;;) {
    for (int round = 0;; ++round) {
      Word state = lock.load(std::memory_order_relaxed);
      if ((state & kLocked) == 0) {
        const Word desired = (state | kLocked) & ~static_cast<Word>(woken ? kWoken : 0);
        // acquire: the critical section sees what the previous holder wrote.
        if (lock.compare_exchange_weak(state, desired, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
          return;
        }
        continue;
      }
      // Spinning pays while nobody is parked: the holder is likely running and near its unlock.
      // Once waiters park, a newcomer queues behind them and only the woken one looks, so that
      // the holder keeps its line.
      if (round == kSpinRounds || ((state & kParked) != 0 && !woken)) break;
      spin_round(lock);
    }
    Word state = lock.load(std::memory_order_relaxed);
    if ((state & kLocked) == 0) continue;
    const Word desired = (state | kParked) & ~static_cast<Word>(woken ? kWoken : 0);
    // relaxed: park() checks the word again under the bucket's mutex, which orders it. Not
    // written when unchanged (a newcomer behind parked waiters): a write takes the holder's line.
    if (desired != state && !lock.compare_exchange_weak(state, desired, std::memory_order_relaxed,
                                                        std::memory_order_relaxed)) {
      continue;
    }
    woken = false;
    const Unparked how = park(&word, [&] {
      const Word now_state = lock.load(std::memory_order_relaxed);
      return (now_state & (kLocked | kParked)) == (kLocked | kParked);
    });
    // A hand-off is ordered by the bucket's mutex, which the unlocker released after its
    // critical section and this thread took to return.
    if (how == Unparked::handed_off) return;
    woken = how == Unparked::woken;
  }
}

template <class Word>
void unlock_word_slow(Word& word) {
  std::atomic_ref<Word> lock(word);
  Word state = lock.load(std::memory_order_relaxed);
  for (;;) {
    // Nobody to wake, or a woken waiter will look at the word anyway.
    if ((state & (kParked | kWoken)) == kParked) break;
    // release: publishes the critical section to the next holder.
    if (lock.compare_exchange_weak(state, state & ~static_cast<Word>(kLocked),
                                   std::memory_order_release, std::memory_order_relaxed)) {
      return;
    }
  }
  unpark_one(&word, [&](const UnparkResult& result) {
    Word current = lock.load(std::memory_order_relaxed);
    const Word parked = result.more ? kParked : 0;
    for (;;) {
      Word desired = 0;
      if (!result.found) {
        // The parked bit outlived its waiters (a waiter that set it found the lock free).
        desired = current & ~static_cast<Word>(kLocked | kParked);
      } else if (result.fair) {
        // Still locked, now for the waiter.
        desired = (current & ~static_cast<Word>(kParked)) | parked;
      } else {
        desired = (current & ~static_cast<Word>(kLocked | kParked)) | parked | kWoken;
      }
      // release: as above (a hand-off is also ordered by the bucket's mutex).
      if (lock.compare_exchange_weak(current, desired, std::memory_order_release,
                                     std::memory_order_relaxed)) {
        return result.found && result.fair;
      }
    }
  });
}

// omp_lock_t and nestable locks are 32-bit words, critical sections pointer-sized ones.
template void lock_word_slow(std::uint32_t&);
template void unlock_word_slow(std::uint32_t&);
template void lock_word_slow(std::uintptr_t&);
template void unlock_word_slow(std::uintptr_t&);

}  // namespace weft::omp
