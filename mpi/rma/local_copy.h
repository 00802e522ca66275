// The copy of a put or get whose target memory this process maps: a memmove by the origin, or,
// when it is large, a SharedCopy that a helper thread spawned on another virtual processor works
// on beside the origin (docs/mpi-rma.md, "Large copies").
#pragma once

#include <cstddef>

namespace weft::mpi::rma {

// Moves `bytes` from `src` to `dst` (which may overlap) and returns when all are there.
void move_local(std::byte* dst, const std::byte* src, std::size_t bytes);

}  // namespace weft::mpi::rma
