// Where the ranks' copies of a program image live: one large mapping holds many copies side by
// side, each a byte-for-byte copy of a template that glibc loaded and relocated once, with the
// template's pointers into itself moved to the copy. A copy then costs no mapping of its own
// (vm.max_map_count) and no glibc link map (glibc's dlopen walks every loaded object, which made
// loading quadratic in the number of ranks).
//
// glibc does not know the copies, so the few of its services that look code up by address are
// answered here for them (copy_arena.cpp): _dl_find_object, through which libgcc's unwinder finds
// a frame's unwind tables (C++ exceptions, backtraces), and dladdr (the crash handler's names).
// Both answer with the template's link map, shifted to the copy.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::tools {

class CopyArena {
 public:
  // Room for `slots` copies of `stride` bytes (a multiple of `alignment`, itself of the page
  // size), of a template loaded at `template_base` whose PT_GNU_EH_FRAME is at `eh_frame` from
  // its base (0: none). `writable_code`: map it readable, writable and executable, so that a copy
  // costs no mapping; else (or where the system refuses such memory) it is mapped writable and the
  // caller protects each copy's code itself (executable() is false), two mappings per copy.
  // Throws weft::Error when the memory cannot be reserved.
  CopyArena(std::size_t slots, std::size_t stride, std::size_t alignment,
            std::uintptr_t template_base, std::uintptr_t eh_frame, void* template_map,
            bool writable_code);
  CopyArena(const CopyArena&) = delete;
  CopyArena& operator=(const CopyArena&) = delete;
  // Never unmapped: copies stay until the process exits (glibc's own never dlclose either), and
  // the unwinder may still be looking at one.
  ~CopyArena() = default;

  bool full() const { return used_ == slots_; }
  // The base address of the next copy (the image's address 0 is there).
  char* take();
  bool executable() const { return executable_; }

 private:
  char* memory_ = nullptr;
  std::size_t slots_ = 0;
  std::size_t stride_ = 0;
  std::size_t used_ = 0;
  bool executable_ = true;
};

}  // namespace weft::tools
