// The memory a rank gave to MPI_Win_create, made reachable by load and store from the window's
// other processes: at creation the rank moves the whole pages of its window onto a named POSIX
// shared memory segment at the same addresses (a copy, then one mremap over them), every rank of
// another process maps that segment, and MPI_Win_free moves the pages back onto private memory.
// A put or get is then a store or load, as on an allocated window, where it was a
// process_vm_writev/readv (a system call and the kernel's walk of the target's pages).
//
// Only pages that hold nothing but the window's bytes move, so no other data of the process can
// change between the copy and the mremap: the pages wholly inside the window; the first and last
// page too when the window begins or ends on a page boundary, or when the window lies in a block
// that glibc's malloc mapped for itself (a large malloc: its own pages, which hold the block's
// header and nothing else). Pages of a file or of a shared mapping (another window's segment) are
// left alone. Bytes on pages that did not move are still reached by cross-memory attach.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace weft::mpi::rma {

// What a rank publishes about its exposed pages.
struct Exposure {
  std::uint64_t pages = 0;    // the first page's address in the owner's process (0: none)
  std::uint64_t length = 0;   // bytes of whole pages
  std::uint32_t segment = 0;  // names the segment with the owner's pid
  bool empty() const { return length == 0; }
};

// The owner's side.
class ExposedMemory {
 public:
  ExposedMemory() = default;
  ExposedMemory(const ExposedMemory&) = delete;
  ExposedMemory& operator=(const ExposedMemory&) = delete;
  ~ExposedMemory() { restore(); }

  // Moves the pages of [base, base + size) that may move onto a new segment; returns what moved
  // (empty when nothing could: the reason is not an error, the bytes stay reachable by
  // cross-memory attach).
  Exposure expose(std::byte* base, std::size_t size);
  // Removes the segment's name once every rank has mapped it (the pages live on).
  void unlink();
  // Moves the pages back onto private memory (every other process has unmapped them).
  void restore();

 private:
  Exposure exposure_;
  bool named_ = false;
};

// An origin's mapping of another process's exposed pages.
class PeerPages {
 public:
  PeerPages() = default;
  PeerPages(const PeerPages&) = delete;
  PeerPages& operator=(const PeerPages&) = delete;
  ~PeerPages() { unmap(); }

  // Maps the segment `exposure` of process `pid`; an empty string, or why it could not.
  std::string map(pid_t pid, const Exposure& exposure);
  // The address here of `address` in the owner's process (inside the exposure).
  std::uintptr_t translate(std::uint64_t address) const {
    return reinterpret_cast<std::uintptr_t>(data_) + (address - pages_);
  }
  void unmap();

 private:
  std::byte* data_ = nullptr;
  std::size_t length_ = 0;
  std::uint64_t pages_ = 0;
};

}  // namespace weft::mpi::rma
