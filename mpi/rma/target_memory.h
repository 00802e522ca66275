// Moving data between an origin buffer and a target's window memory: by load and store when the
// origin maps the memory (`direct`), else by cross-memory attach into the target's process. Both
// are one copy made by the origin, with no part for the target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "datatype/datatype.h"
#include "mpi.h"
#include "rma/window.h"

namespace weft::mpi::rma {

// Where `count` elements of `type` at displacement `disp` of a target's window lie.
struct Place {
  std::byte* direct = nullptr;  // in this process (null: reach it at `address` in `pid`)
  std::uintptr_t address = 0;   // in the target's address space
  pid_t pid = 0;
  bool local() const { return direct != nullptr; }
};

// The bytes [lo, hi) relative to the start of `count` elements of `type` that they touch.
struct Span {
  MPI_Aint lo = 0;
  MPI_Aint hi = 0;
};
Span span_of(std::size_t count, const Datatype& type);

// The place of `disp` at `target`; an empty string, or why the access falls outside the target's
// window (MPI_ERR_RMA_RANGE).
std::string locate(const Window& win, int target, MPI_Aint disp, std::size_t count,
                   const Datatype& type, Place& place);

// Calls f(offset, length) for every block of `count` elements of `type`, in type-map order.
void for_each_block(std::size_t count, const Datatype& type,
                    const std::function<void(MPI_Aint, std::size_t)>& f);

// Copies between the origin's typed buffer and the target's. Returns an empty string, or why the
// cross-memory copy failed.
std::string put(const void* origin, std::size_t origin_count, const Datatype& origin_type,
                const Place& target, std::size_t target_count, const Datatype& target_type);
std::string get(void* origin, std::size_t origin_count, const Datatype& origin_type,
                const Place& target, std::size_t target_count, const Datatype& target_type);

// Raw bytes of a target's memory by address in its process (cross-memory attach).
std::string read_remote(pid_t pid, std::uintptr_t address, void* out, std::size_t bytes);
std::string write_remote(pid_t pid, std::uintptr_t address, const void* in, std::size_t bytes);

}  // namespace weft::mpi::rma
