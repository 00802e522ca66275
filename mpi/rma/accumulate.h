// Accumulate operations on a target's window (MPI-4.1 12.3.4-12.3.5). Each is atomic per basic
// element with respect to every other accumulate on the same element:
//
// - by atomic instructions on the element (one per element: fetch-add, exchange, or a
//   compare-and-swap loop around the operation) when the element is 1, 2, 4 or 8 bytes of a
//   predefined non-pair type and every origin of the window maps the target's memory;
// - otherwise under the target's accumulate locks: one per 64-byte stripe of the target's
//   memory, taken in stripe order for the stripes the operation touches, so that accumulates on
//   distinct elements rarely wait for each other. A target reached by cross-memory attach makes
//   every origin use the locks (window.h), so that both kinds of origin exclude each other.
#pragma once

#include <cstddef>
#include <string>

#include "datatype/datatype.h"
#include "mpi.h"
#include "rma/target_memory.h"
#include "rma/window.h"

namespace weft::mpi::rma {

// target = operand op target for `count` elements of `type` at `place`. `operand` is packed
// (count * type.size() bytes; unread for MPI_NO_OP); `result`, when not null, receives the
// target's previous contents, packed. Returns an empty string, or why a cross-memory transfer
// failed.
std::string accumulate(Window& win, int target, const Place& place, std::size_t count,
                       const Datatype& type, MPI_Op op, const std::byte* operand,
                       std::byte* result);

// MPI_Compare_and_swap on one element of the predefined `type`.
std::string compare_and_swap(Window& win, int target, const Place& place, const Datatype& type,
                             const void* compare, const void* origin, void* result);

}  // namespace weft::mpi::rma
