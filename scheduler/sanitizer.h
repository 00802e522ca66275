// What the sanitizers must be told about user-level context switches, compiled in only for the
// builds that use them (WEFT_SANITIZE): elsewhere every function here is empty and inlined away.
//
// AddressSanitizer keeps one stack per kernel thread; a switch to another stack without notice
// makes it take the new frames for a stack overflow or report false errors when a no-return call
// (a throw, longjmp) unpoisons "the" stack. __sanitizer_start_switch_fiber, called just before a
// switch with the bounds of the stack switched to, and __sanitizer_finish_switch_fiber, called
// first thing after it, keep it right. ThreadSanitizer keeps one vector clock per thread; each
// user thread gets a TSan fiber of its own, and __tsan_switch_to_fiber makes the switch a
// synchronisation, as it is (the queue hand-off already orders it, but through assembly).
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define WEFT_SANITIZER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_SANITIZER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define WEFT_SANITIZER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT_SANITIZER_TSAN 1
#endif
#endif

#if defined(WEFT_SANITIZER_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(WEFT_SANITIZER_TSAN)
#include <sanitizer/tsan_interface.h>
// TSan's dynamic annotations (exported by its runtime, declared by no installed header).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace weft::detail::sanitizer {

#if defined(WEFT_SANITIZER_TSAN)
inline constexpr bool kThread = true;
#else
inline constexpr bool kThread = false;
#endif

// The stack a context runs on, as AddressSanitizer wants it (lowest address and size).
struct StackBounds {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

// Called on the context that switches, just before the switch to a context that runs on `to`
// and whose TSan fiber is `to_fiber`. `fake_stack` keeps the switching context's ASan fake stack
// (use-after-return detection) until it resumes; null when it never resumes (a thread that
// ended), so that ASan frees it.
inline void start_switch(void** fake_stack, StackBounds to, void* to_fiber) noexcept {
#if defined(WEFT_SANITIZER_ASAN)
  __sanitizer_start_switch_fiber(fake_stack, to.bottom, to.size);
#else
  (void)fake_stack;
  (void)to;
#endif
#if defined(WEFT_SANITIZER_TSAN)
  __tsan_switch_to_fiber(to_fiber, 0);
#else
  (void)to_fiber;
#endif
}

// Whether start_switch and finish_switch below have anything to do: AddressSanitizer's builds
// must be told of every switch before and after it, ThreadSanitizer's before it.
#if defined(WEFT_SANITIZER_ASAN)
inline constexpr bool kFinishesSwitch = true;
#else
inline constexpr bool kFinishesSwitch = false;
#endif
#if defined(WEFT_SANITIZER_ASAN) || defined(WEFT_SANITIZER_TSAN)
inline constexpr bool kAnnotatesSwitches = true;
#else
inline constexpr bool kAnnotatesSwitches = false;
#endif

// Called first thing on the context switched to; `fake_stack` is what its own start_switch
// saved (null for a context that runs for the first time). Returns the bounds of the stack
// switched from.
inline StackBounds finish_switch(void* fake_stack) noexcept {
  StackBounds from;
#if defined(WEFT_SANITIZER_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, &from.bottom, &from.size);
#else
  (void)fake_stack;
#endif
  return from;
}

// A TSan fiber for a new user thread, destroyed by destroy_fiber once the thread has ended and
// another context runs.
inline void* create_fiber() noexcept {
#if defined(WEFT_SANITIZER_TSAN)
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}

inline void destroy_fiber(void* fiber) noexcept {
#if defined(WEFT_SANITIZER_TSAN)
  if (fiber != nullptr) __tsan_destroy_fiber(fiber);
#else
  (void)fiber;
#endif
}

// The TSan fiber of the calling kernel thread's own stack (a processor's idle loop).
inline void* current_fiber() noexcept {
#if defined(WEFT_SANITIZER_TSAN)
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}

// Reads TSan must not check while the scope lives: a copy that races with its owner's writes by
// design and is kept only once validated after the read (a seqlock read).
class IgnoreReads {
 public:
#if defined(WEFT_SANITIZER_TSAN)
  IgnoreReads() noexcept {
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  }
  ~IgnoreReads() {
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  }
#else
  IgnoreReads() noexcept = default;
#endif
  IgnoreReads(const IgnoreReads&) = delete;
  IgnoreReads& operator=(const IgnoreReads&) = delete;
};

// A recycled stack keeps the poisoned redzones of the frames of the thread that last ran on it
// (it ended inside them, never returning); the next thread must start on clean memory.
inline void forget_stack(void* base, std::size_t size) noexcept {
#if defined(WEFT_SANITIZER_ASAN)
  __asan_unpoison_memory_region(base, size);
#else
  (void)base;
  (void)size;
#endif
}

}  // namespace weft::detail::sanitizer
