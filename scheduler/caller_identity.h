// Who is calling, for state kept per thread across scheduling points: a user thread by its weft
// id (top bit set), since a thread that parks may resume on another kernel thread; any other
// thread by its kernel thread id.
#pragma once

#include <unistd.h>

#include <cstdint>

#include "weft/this_thread.h"

namespace weft::detail {

inline std::uint64_t caller_identity() noexcept {
  if (this_thread::is_weft_thread()) return this_thread::id() | (std::uint64_t{1} << 63);
  return static_cast<std::uint64_t>(::gettid());
}

}  // namespace weft::detail
