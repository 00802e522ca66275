// The program's rank image: the shared object that weftcc links from the user's code and embeds in
// section .weft_image of the executable. Every rank loads its own copy, so that it has its own
// global and static variables and runs the static constructors and destructors of its copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace weft::tools {

using MainFunction = int (*)(int argc, char** argv, char** envp);

class ProgramImage {
 public:
  class Copy;

  // Reads the image embedded in the running executable. Throws weft::Error when it has none.
  static ProgramImage from_running_executable();

  // Loads a private copy for `rank` from a weft thread: maps it, runs its static constructors and
  // finds its main. Throws weft::Error naming the rank when any step fails.
  Copy load(int rank) const;

 private:
  // The finalizer array (DT_FINI_ARRAY) of the image, relative to a copy's base.
  struct Finalizers {
    std::uint64_t address = 0;
    std::size_t count = 0;
    bool read_only = false;  // inside the RELRO segment: made writable before it is emptied
  };

  ProgramImage(std::vector<char> bytes, Finalizers finalizers)
      : bytes_(std::move(bytes)), finalizers_(finalizers) {}

  // The image up to the end of its last loadable segment, without section headers: the dynamic
  // loader needs nothing else, and each rank's copy costs memory.
  std::vector<char> bytes_;
  Finalizers finalizers_;
};

// One rank's copy. Destroying it, in the rank's thread, runs the copy's finalizers: its static
// destructors, atexit handlers and destructor functions. The copy stays mapped until the process
// exits: glibc's dlclose walks every loaded object and unmapping costs TLB shootdowns, which made
// unloading 4096 copies one by one the largest part of a launch (docs/privatization.md).
class ProgramImage::Copy {
 public:
  Copy(Copy&& other) noexcept;
  Copy& operator=(Copy&&) = delete;
  ~Copy();

  MainFunction main() const { return main_; }

 private:
  friend class ProgramImage;
  Copy(const ProgramImage& image, char* base, MainFunction main)
      : image_(&image), base_(base), main_(main) {}

  const ProgramImage* image_;  // null once moved from
  char* base_;                 // where the copy is loaded (its link map's l_addr)
  MainFunction main_;
};

}  // namespace weft::tools
