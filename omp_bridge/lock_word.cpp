#include "lock_word.h"

#include <array>
#include <cstdint>

namespace weft::omp {

Signal& parking_signal(const void* address) {
  // Locks that share a Signal only wake each other needlessly; 64 keep that rare.
  static std::array<Signal, 64> signals;
  const auto bits = reinterpret_cast<std::uintptr_t>(address);
  return signals[(bits >> 3 ^ bits >> 9) % signals.size()];
}

}  // namespace weft::omp
