// The program's rank image: the shared object that weftcc links from the user's code and embeds in
// section .weft_image of the executable. Every rank gets its own copy, so that it has its own
// global and static variables and runs the constructors and finalizers of its copy.
//
// glibc loads and relocates the image once, as a template that never runs; each rank's copy is
// the template's loaded bytes copied into a slot of a large arena (copy_arena.h), with the
// template's pointers into itself moved to the copy: no dlopen, link map or mapping per copy, so
// loading is linear in the ranks and 100 000 copies fit under vm.max_map_count. The copies are made
// one after the other by the thread that starts the job, before the ranks run. A copy's
// constructors are held back (glibc does not see the template's DT_INIT_ARRAY) and run in the
// rank's own thread, before main.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weft::tools {

using MainFunction = int (*)(int argc, char** argv, char** envp);

class ProgramImage {
 public:
  class Copy;

  // Reads the image embedded in the running executable. Throws weft::Error when it has none.
  static ProgramImage from_running_executable();
  // Reads the image embedded in the weft program at `path` (MPI_Comm_spawn). Throws weft::Error
  // when it cannot be read or is no weft program.
  static ProgramImage from_file(const std::string& path);

  // Where a copy's references to the predefined communicators of mpi.h go: a rank that
  // MPI_Comm_spawn started has its own world, hence its own MPI_COMM_WORLD and MPI_COMM_SELF.
  // Null: those of the job (libweft's objects).
  struct Binding {
    void* world = nullptr;
    void* self = nullptr;
  };

  // Makes a private copy for `rank` and finds its main; runs none of its constructors. Not for
  // concurrent calls. Throws weft::Error naming the rank.
  Copy load(int rank, Binding binding) const;
  Copy load(int rank) const;
  // Room for `copies` more copies in one new arena, before loading them one by one from
  // `first_rank` on. Throws weft::Error naming that rank when the program cannot be loaded or the
  // memory cannot be reserved.
  void reserve(std::size_t copies, int first_rank) const;

  // Memory mappings a loaded copy takes (vm.max_map_count bounds them): none inside an arena,
  // two where the system refuses memory that is both writable and executable (known once the
  // first arena is reserved; 0 before).
  std::size_t mappings_per_copy() const;

 private:
  // An array of function pointers in the image, at `address` from a copy's base.
  struct FunctionArray {
    std::uint64_t address = 0;
    std::size_t count = 0;
  };

  // A dynamic relocation of the image against one of the predefined communicators.
  struct CommReference {
    std::uint64_t offset = 0;  // from a copy's base
    std::int64_t addend = 0;   // added to the symbol's address (0 for a GOT entry)
    bool self = false;         // weft_mpi_comm_self, else weft_mpi_comm_world
  };

  // The image as glibc loaded it once (program_image.cpp); made at the first load.
  struct Template;

  ProgramImage() = default;
  static ProgramImage read(const std::string& path, const std::string& missing);
  void find_comm_references(const std::vector<Elf64_Phdr>& segments);
  Template& loaded_template(int rank) const;

  // The image up to the end of its last loadable segment, without section headers (the dynamic
  // loader needs nothing else, and each rank's copy costs memory) and with its DT_INIT_ARRAY
  // entries renamed.
  std::vector<char> bytes_;
  FunctionArray constructors_;         // DT_INIT_ARRAY
  FunctionArray finalizers_;           // DT_FINI_ARRAY
  bool finalizers_read_only_ = false;  // inside the RELRO segment
  std::vector<CommReference> comm_references_;
  std::vector<Elf64_Phdr> segments_;  // the program headers
  mutable std::shared_ptr<Template> template_;
};

// One rank's copy. It stays mapped until the process exits: an arena is unmapped whole or not at
// all, and the unwinder may look at a copy's tables as long as a thread runs its code.
class ProgramImage::Copy {
 public:
  // Runs the copy's constructors (static constructors of C++, constructor functions) in order,
  // with the rank's arguments, as glibc runs them at load.
  void construct(int argc, char** argv, char** envp) const;
  // Runs the copy's finalizers in reverse: destructor functions, then the C runtime's, which runs
  // the static destructors and atexit handlers registered by this copy. Once; glibc's own array
  // was emptied at load, so that process exit does not run them again.
  void finalize();

  MainFunction main() const { return main_; }

 private:
  friend class ProgramImage;
  using Constructor = void (*)(int, char**, char**);
  using Finalizer = void (*)();

  Copy(MainFunction main, Constructor* constructors, std::size_t constructor_count,
       std::vector<Finalizer> finalizers)
      : main_(main),
        constructors_(constructors),
        constructor_count_(constructor_count),
        finalizers_(std::move(finalizers)) {}

  MainFunction main_;
  Constructor* constructors_;  // inside the copy
  std::size_t constructor_count_;
  std::vector<Finalizer> finalizers_;
};

}  // namespace weft::tools
