// The copy of a put or get whose target memory this process maps: a memmove by the origin, or,
// when it is large, a SharedCopy that a helper thread spawned on another virtual processor works
// on beside the origin (docs/mpi-rma.md, "Large copies").
#pragma once

#include <cstddef>
#include <cstring>

namespace weft::mpi::rma {

// A spawned helper starts after a spawn and, often, a wake-up of a sleeping processor (tens of
// microseconds on a virtual machine): below 1 MiB (about 60 us for one core here) it would find
// little left to copy.
inline constexpr std::size_t kHelpedBytes = std::size_t{1} << 20;

// move_local() of a copy of at least kHelpedBytes.
void move_large(std::byte* dst, const std::byte* src, std::size_t bytes);

// Moves `bytes` from `src` to `dst` (which may overlap) and returns when all are there. Inline:
// a put of a few bytes pays only the comparison.
inline void move_local(std::byte* dst, const std::byte* src, std::size_t bytes) {
  if (bytes < kHelpedBytes) {
    std::memmove(dst, src, bytes);
  } else {
    move_large(dst, src, bytes);
  }
}

}  // namespace weft::mpi::rma
