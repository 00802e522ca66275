#include "rma/control.h"

namespace weft::mpi::rma {

std::size_t Control::bytes(int ranks) {
  const auto n = static_cast<std::size_t>(ranks);
  return n * sizeof(Slot) + n * n * sizeof(std::uint64_t);
}

void Control::bind(std::byte* memory, int ranks) {
  ranks_ = ranks;
  slots_ = reinterpret_cast<Slot*>(memory);
  posts_ =
      reinterpret_cast<std::uint64_t*>(memory + static_cast<std::size_t>(ranks) * sizeof(Slot));
}

}  // namespace weft::mpi::rma
