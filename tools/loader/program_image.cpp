#include "program_image.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>

#include "copy_arena.h"
#include "elf_section.h"
#include "weft/error.h"
#include "weft/thread_storage.h"

namespace weft::tools {

namespace {

// Copies ever loaded (see unique_path).
std::uint64_t loads = 0;

// What a renamed DT_INIT_ARRAY entry is called: a tag in the OS range that glibc skips.
constexpr Elf64_Sxword kHeldBackTag = DT_LOOS + 0x7765;  // "we"

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

std::string dl_error() {
  const char* reason = ::dlerror();
  return reason != nullptr ? reason : "unknown dynamic loader error";
}

// glibc returns an already loaded object whose name equals the requested path before it looks at
// the file, and a closed descriptor's number is reused by the next copy: "/proc/self/fd/5" of two
// ranks would be one object. Each load therefore gets a distinct spelling of the path, the binary
// digits of `serial` written as "/." (1) and "/" (0) in front of it; every spelling resolves to
// the same file.
std::string unique_path(std::uint64_t serial, int fd) {
  std::string path;
  do {
    path.insert(0, (serial & 1) != 0 ? "/." : "/");
    serial >>= 1;
  } while (serial != 0);
  return path + "/proc/self/fd/" + std::to_string(fd);
}

std::string map_count_hint() {
  std::ifstream file("/proc/sys/vm/max_map_count");
  long limit = 0;
  if (!(file >> limit)) return {};
  return " (vm.max_map_count is " + std::to_string(limit) + ")";
}

std::size_t page_size() {
  return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// Copies a new arena holds at least (MPI_Comm_spawn's ranks come a few at a time).
constexpr std::size_t kMinArenaCopies = 64;
// Up to this many copies an arena keeps W^X: each copy's code is made read-execute on its own, at
// two mappings per copy (8192 of the default vm.max_map_count of 65530). Beyond, the mappings
// would cap the ranks of a process, and the arena's code stays writable (docs/architecture.md,
// Rank images).
constexpr std::size_t kProtectedCodeCopies = 4096;

std::vector<char> read_range(int fd, const FileRange& range) {
  std::vector<char> bytes(range.size);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::pread(fd, bytes.data() + done, bytes.size() - done,
                                static_cast<off_t>(range.offset + done));
    if (got <= 0) throw Error(system_error("cannot read the rank image"));
    done += static_cast<std::size_t>(got);
  }
  return bytes;
}

template <class T>
T read_struct(const std::vector<char>& bytes, std::uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) {
    throw Error("the embedded rank image is truncated");
  }
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

std::vector<Elf64_Phdr> read_segments(const std::vector<char>& image, Elf64_Ehdr& header) {
  header = read_struct<Elf64_Ehdr>(image, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_type != ET_DYN || header.e_phentsize != sizeof(Elf64_Phdr)) {
    throw Error("the embedded rank image is not a 64-bit ELF shared object");
  }
  std::vector<Elf64_Phdr> segments;
  for (std::size_t i = 0; i < header.e_phnum; ++i) {
    segments.push_back(read_struct<Elf64_Phdr>(image, header.e_phoff + i * sizeof(Elf64_Phdr)));
  }
  return segments;
}

// Keeps the bytes up to the end of the last loadable segment and drops the section headers that
// pointed past it: debug information would otherwise be copied once per rank.
void trim_to_loadable(std::vector<char>& image, Elf64_Ehdr header,
                      const std::vector<Elf64_Phdr>& segments) {
  std::uint64_t end = header.e_phoff + header.e_phnum * sizeof(Elf64_Phdr);
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type == PT_LOAD) end = std::max(end, segment.p_offset + segment.p_filesz);
  }
  if (end > image.size()) throw Error("the embedded rank image is truncated");
  image.resize(end);
  header.e_shoff = 0;
  header.e_shnum = 0;
  header.e_shstrndx = SHN_UNDEF;
  std::memcpy(image.data(), &header, sizeof header);
}

}  // namespace

ProgramImage ProgramImage::from_running_executable() {
  return read("/proc/self/exe", "this executable carries no rank image (section " +
                                    std::string(kImageSection) +
                                    "); link the program with weftcc or weftcxx");
}

ProgramImage ProgramImage::from_file(const std::string& path) {
  return read(path, path + " is not a weft program (it has no section " +
                        std::string(kImageSection) +
                        "): weft starts spawned ranks as threads of this job, from programs "
                        "linked by weftcc or weftcxx");
}

ProgramImage ProgramImage::read(const std::string& path, const std::string& missing) {
  FileDescriptor executable(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (executable.get() < 0) throw Error(system_error("cannot open " + path));
  const std::optional<FileRange> section = find_elf_section(executable.get(), kImageSection);
  if (!section) throw Error(missing);
  ProgramImage image;
  image.bytes_ = read_range(executable.get(), *section);
  std::vector<char>& bytes = image.bytes_;
  Elf64_Ehdr header;
  const std::vector<Elf64_Phdr> segments = read_segments(bytes, header);

  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_DYNAMIC) continue;
    for (std::uint64_t at = segment.p_offset; at < segment.p_offset + segment.p_filesz;
         at += sizeof(Elf64_Dyn)) {
      auto entry = read_struct<Elf64_Dyn>(bytes, at);
      if (entry.d_tag == DT_NULL) break;
      switch (entry.d_tag) {
        case DT_INIT_ARRAY:
          image.constructors_.address = entry.d_un.d_ptr;
          break;
        case DT_INIT_ARRAYSZ:
          image.constructors_.count = entry.d_un.d_val / sizeof(void*);
          break;
        case DT_FINI_ARRAY:
          image.finalizers_.address = entry.d_un.d_ptr;
          break;
        case DT_FINI_ARRAYSZ:
          image.finalizers_.count = entry.d_un.d_val / sizeof(void*);
          break;
        default:
          continue;
      }
      if (entry.d_tag == DT_INIT_ARRAY || entry.d_tag == DT_INIT_ARRAYSZ) {
        entry.d_tag = kHeldBackTag;
        std::memcpy(bytes.data() + at, &entry, sizeof entry);
      }
    }
  }
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type == PT_GNU_RELRO && image.finalizers_.address >= segment.p_vaddr &&
        image.finalizers_.address < segment.p_vaddr + segment.p_memsz) {
      image.finalizers_read_only_ = true;
    }
  }
  image.find_comm_references(segments);
  image.segments_ = segments;
  trim_to_loadable(bytes, header, segments);
  return image;
}

void ProgramImage::find_comm_references(const std::vector<Elf64_Phdr>& segments) {
  // Addresses in the dynamic section are virtual; the image bytes are the file.
  auto offset_of = [&](std::uint64_t address) -> std::uint64_t {
    for (const Elf64_Phdr& segment : segments) {
      if (segment.p_type == PT_LOAD && address >= segment.p_vaddr &&
          address < segment.p_vaddr + segment.p_filesz) {
        return address - segment.p_vaddr + segment.p_offset;
      }
    }
    throw Error("the embedded rank image has a dynamic table outside its segments");
  };
  std::uint64_t rela = 0, rela_size = 0, symbols = 0, strings = 0;
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_DYNAMIC) continue;
    for (std::uint64_t at = segment.p_offset; at < segment.p_offset + segment.p_filesz;
         at += sizeof(Elf64_Dyn)) {
      const auto entry = read_struct<Elf64_Dyn>(bytes_, at);
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag == DT_RELA) rela = entry.d_un.d_ptr;
      if (entry.d_tag == DT_RELASZ) rela_size = entry.d_un.d_val;
      if (entry.d_tag == DT_SYMTAB) symbols = entry.d_un.d_ptr;
      if (entry.d_tag == DT_STRTAB) strings = entry.d_un.d_ptr;
    }
  }
  if (rela == 0 || symbols == 0 || strings == 0) return;
  const std::uint64_t rela_at = offset_of(rela);
  const std::uint64_t symbols_at = offset_of(symbols);
  const std::uint64_t strings_at = offset_of(strings);
  for (std::uint64_t at = rela_at; at < rela_at + rela_size; at += sizeof(Elf64_Rela)) {
    const auto relocation = read_struct<Elf64_Rela>(bytes_, at);
    const auto type = ELF64_R_TYPE(relocation.r_info);
#if defined(__x86_64__)
    const bool got = type == R_X86_64_GLOB_DAT;
    const bool absolute = type == R_X86_64_64;
#elif defined(__aarch64__)
    const bool got = type == R_AARCH64_GLOB_DAT;
    const bool absolute = type == R_AARCH64_ABS64;
#else
#error "weft's loader knows the relocations of x86-64 and AArch64 only"
#endif
    if (!got && !absolute) continue;
    const auto symbol = read_struct<Elf64_Sym>(
        bytes_, symbols_at + ELF64_R_SYM(relocation.r_info) * sizeof(Elf64_Sym));
    const std::uint64_t name_at = strings_at + symbol.st_name;
    if (name_at >= bytes_.size()) continue;
    const std::string_view name(bytes_.data() + name_at,
                                ::strnlen(bytes_.data() + name_at, bytes_.size() - name_at));
    if (name != "weft_mpi_comm_world" && name != "weft_mpi_comm_self") continue;
    comm_references_.push_back(
        CommReference{relocation.r_offset, got ? 0 : relocation.r_addend, name.back() == 'f'});
  }
}

namespace {

// Put in place of each finalizer of glibc's array: glibc calls the array at process exit.
void finalizer_done() {}

}  // namespace

ProgramImage::Copy ProgramImage::load(int rank) const {
  return load(rank, Binding{});
}

struct ProgramImage::Template {
  char* base = nullptr;           // where glibc put the image's address 0
  std::size_t span = 0;           // bytes from 0 to the end of the last segment, aligned
  std::size_t alignment = 0;      // of a copy's base: the largest segment alignment
  std::vector<Elf64_Phdr> loads;  // PT_LOAD segments
  // Offsets of the relocated words that point into the template: a copy adds its distance.
  std::vector<std::uint64_t> fixups;
  std::uint64_t main = 0;      // offset of main
  std::uint64_t eh_frame = 0;  // offset of PT_GNU_EH_FRAME, 0 when none
  link_map* map = nullptr;
  std::vector<void (*)()> finalizers;  // the template's DT_FINI_ARRAY, as relocated
  std::vector<std::unique_ptr<CopyArena>> arenas;
};

namespace {

// Calls `visit(offset)` for the place of every dynamic relocation of the image in `bytes`
// (RELA, PLT and RELR tables), offsets from the image's address 0.
template <class Visit>
void for_each_relocated_word(const std::vector<char>& bytes,
                             const std::vector<Elf64_Phdr>& segments, Visit visit) {
  auto offset_of = [&](std::uint64_t address) -> std::uint64_t {
    for (const Elf64_Phdr& segment : segments) {
      if (segment.p_type == PT_LOAD && address >= segment.p_vaddr &&
          address < segment.p_vaddr + segment.p_filesz) {
        return address - segment.p_vaddr + segment.p_offset;
      }
    }
    throw Error("the embedded rank image has a dynamic table outside its segments");
  };
  std::uint64_t rela = 0, rela_size = 0, plt = 0, plt_size = 0, relr = 0, relr_size = 0;
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_DYNAMIC) continue;
    for (std::uint64_t at = segment.p_offset; at < segment.p_offset + segment.p_filesz;
         at += sizeof(Elf64_Dyn)) {
      const auto entry = read_struct<Elf64_Dyn>(bytes, at);
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag == DT_REL) throw Error("the embedded rank image has REL relocations");
      if (entry.d_tag == DT_RELA) rela = entry.d_un.d_ptr;
      if (entry.d_tag == DT_RELASZ) rela_size = entry.d_un.d_val;
      if (entry.d_tag == DT_JMPREL) plt = entry.d_un.d_ptr;
      if (entry.d_tag == DT_PLTRELSZ) plt_size = entry.d_un.d_val;
      if (entry.d_tag == DT_RELR) relr = entry.d_un.d_ptr;
      if (entry.d_tag == DT_RELRSZ) relr_size = entry.d_un.d_val;
    }
  }
  for (auto [table, size] : {std::pair{rela, rela_size}, std::pair{plt, plt_size}}) {
    if (table == 0) continue;
    const std::uint64_t at = offset_of(table);
    for (std::uint64_t i = 0; i < size; i += sizeof(Elf64_Rela)) {
      visit(read_struct<Elf64_Rela>(bytes, at + i).r_offset);
    }
  }
  if (relr != 0) {
    // An address entry, then bitmaps of the 63 words after it (the ELF gABI's RELR encoding).
    const std::uint64_t at = offset_of(relr);
    std::uint64_t where = 0;
    for (std::uint64_t i = 0; i < relr_size; i += sizeof(std::uint64_t)) {
      std::uint64_t entry = read_struct<std::uint64_t>(bytes, at + i);
      if ((entry & 1) == 0) {
        visit(entry);
        where = entry + sizeof(std::uint64_t);
        continue;
      }
      for (std::uint64_t word = 0; (entry >>= 1) != 0; ++word) {
        if ((entry & 1) != 0) visit(where + word * sizeof(std::uint64_t));
      }
      where += 63 * sizeof(std::uint64_t);
    }
  }
}

}  // namespace

ProgramImage::Template& ProgramImage::loaded_template(int rank) const {
  if (template_ != nullptr) return *template_;
  // The template is loaded for the first copy: its errors are that copy's.
  const std::string who = "rank " + std::to_string(rank);
  FileDescriptor file(::memfd_create("weft-rank-template", MFD_CLOEXEC));
  if (file.get() < 0) throw Error(system_error(who + ": cannot create its copy of the program"));
  for (std::size_t done = 0; done < bytes_.size();) {
    const ssize_t wrote = ::write(file.get(), bytes_.data() + done, bytes_.size() - done);
    if (wrote < 0) throw Error(system_error(who + ": cannot write its copy of the program"));
    done += static_cast<std::size_t>(wrote);
  }
  // A spawned program's image is loaded from its own file: each needs its own spelling.
  const std::string path = unique_path(loads++, file.get());
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const std::string reason = dl_error();
    throw Error(who + ": cannot load its copy of the program: " + reason +
                (reason.find("map") != std::string::npos ? map_count_hint() : ""));
  }
  void* main = ::dlsym(handle, "main");
  if (main == nullptr) {
    throw Error("the program has no visible main function (" + dl_error() + ")");
  }
  auto loaded = std::make_shared<Template>();
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &loaded->map) != 0 || loaded->map == nullptr) {
    throw Error(who + ": cannot locate its copy of the program (" + dl_error() + ")");
  }
  loaded->base = reinterpret_cast<char*>(loaded->map->l_addr);
  loaded->main = static_cast<std::uint64_t>(static_cast<char*>(main) - loaded->base);
  // The copies' __thread variables (one module: the template's) then belong to each user thread
  // that runs their code (OpenMP workers and the rank share cores), not to the kernel thread.
  std::size_t tls_module = 0;
  if (::dlinfo(handle, RTLD_DI_TLS_MODID, &tls_module) == 0 && tls_module != 0) {
    give_each_thread_own_tls(tls_module);
  }

  // glibc runs the template's finalizers at process exit: they must find nothing to do, as its
  // constructors never ran.
  auto* finalizers = reinterpret_cast<Copy::Finalizer*>(loaded->base + finalizers_.address);
  if (finalizers_read_only_ && finalizers_.count > 0) {
    const auto page = static_cast<std::uintptr_t>(page_size());
    const auto begin = reinterpret_cast<std::uintptr_t>(finalizers) & ~(page - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(finalizers + finalizers_.count);
    if (::mprotect(reinterpret_cast<void*>(begin), end - begin, PROT_READ | PROT_WRITE) != 0) {
      throw Error(system_error(who + ": cannot take over the finalizers of the program"));
    }
  }
  loaded->finalizers.assign(finalizers, finalizers + finalizers_.count);
  std::fill(finalizers, finalizers + finalizers_.count, &finalizer_done);

  loaded->alignment = page_size();
  std::uint64_t end = 0;
  for (const Elf64_Phdr& segment : segments_) {
    if (segment.p_type == PT_GNU_EH_FRAME) loaded->eh_frame = segment.p_vaddr;
    if (segment.p_type != PT_LOAD) continue;
    loaded->loads.push_back(segment);
    end = std::max(end, segment.p_vaddr + segment.p_memsz);
    loaded->alignment = std::max<std::size_t>(loaded->alignment, segment.p_align);
  }
  loaded->span = (end + loaded->alignment - 1) / loaded->alignment * loaded->alignment;
  const auto base = reinterpret_cast<std::uintptr_t>(loaded->base);
  for_each_relocated_word(bytes_, segments_, [&](std::uint64_t offset) {
    if (offset + sizeof(std::uint64_t) > end) {
      throw Error("the embedded rank image relocates a word outside its segments");
    }
    std::uint64_t value;
    std::memcpy(&value, loaded->base + offset, sizeof value);
    if (value >= base && value < base + end) loaded->fixups.push_back(offset);
  });
  template_ = std::move(loaded);
  return *template_;
}

void ProgramImage::reserve(std::size_t copies, int first_rank) const {
  Template& loaded = loaded_template(first_rank);
  try {
    loaded.arenas.push_back(
        std::make_unique<CopyArena>(std::max(copies, kMinArenaCopies), loaded.span,
                                    loaded.alignment, reinterpret_cast<std::uintptr_t>(loaded.base),
                                    loaded.eh_frame, loaded.map, copies > kProtectedCodeCopies));
  } catch (const Error& error) {
    throw Error("rank " + std::to_string(first_rank) + ": " + error.what());
  }
}

std::size_t ProgramImage::mappings_per_copy() const {
  if (template_ == nullptr || template_->arenas.empty()) return 0;
  return template_->arenas.back()->executable() ? 0 : 2;
}

ProgramImage::Copy ProgramImage::load(int rank, Binding binding) const {
  const std::string who = "rank " + std::to_string(rank);
  Template& loaded = loaded_template(rank);
  if (loaded.arenas.empty() || loaded.arenas.back()->full()) {
    reserve(kMinArenaCopies, rank);
  }
  CopyArena& arena = *loaded.arenas.back();
  char* base = arena.take();
  for (const Elf64_Phdr& segment : loaded.loads) {
    std::memcpy(base + segment.p_vaddr, loaded.base + segment.p_vaddr, segment.p_filesz);
  }
  const std::uint64_t distance = static_cast<std::uint64_t>(base - loaded.base);
  for (std::uint64_t offset : loaded.fixups) {
    std::uint64_t value;
    std::memcpy(&value, base + offset, sizeof value);
    value += distance;
    std::memcpy(base + offset, &value, sizeof value);
  }
  for (const CommReference& reference : comm_references_) {
    void* object = reference.self ? binding.self : binding.world;
    if (object == nullptr) continue;
    char* target = static_cast<char*>(object) + reference.addend;
    std::memcpy(base + reference.offset, &target, sizeof target);
  }
  if (!arena.executable()) {
    const std::uint64_t page = page_size();
    for (const Elf64_Phdr& segment : loaded.loads) {
      if ((segment.p_flags & PF_X) == 0) continue;
      const std::uint64_t begin = segment.p_vaddr / page * page;
      const std::uint64_t end = (segment.p_vaddr + segment.p_memsz + page - 1) / page * page;
      if (::mprotect(base + begin, end - begin, PROT_READ | PROT_EXEC) != 0) {
        throw Error(system_error(who + ": cannot protect the code of its copy") +
                    (errno == ENOMEM ? map_count_hint() : ""));
      }
    }
  }
  std::vector<Copy::Finalizer> finalizers;
  finalizers.reserve(loaded.finalizers.size());
  const auto template_begin = reinterpret_cast<std::uintptr_t>(loaded.base);
  for (Copy::Finalizer finalizer : loaded.finalizers) {
    const auto address = reinterpret_cast<std::uintptr_t>(finalizer);
    finalizers.push_back(address >= template_begin && address < template_begin + loaded.span
                             ? reinterpret_cast<Copy::Finalizer>(address + distance)
                             : finalizer);
  }
  return Copy(reinterpret_cast<MainFunction>(base + loaded.main),
              reinterpret_cast<Copy::Constructor*>(base + constructors_.address),
              constructors_.count, std::move(finalizers));
}

void ProgramImage::Copy::construct(int argc, char** argv, char** envp) const {
  for (std::size_t i = 0; i < constructor_count_; ++i) constructors_[i](argc, argv, envp);
}

void ProgramImage::Copy::finalize() {
  // The first entry is the C runtime's (__do_global_dtors_aux): it runs __cxa_finalize for the
  // copy's __dso_handle, that is the copy's static destructors and atexit handlers.
  std::vector<Finalizer> finalizers = std::move(finalizers_);
  finalizers_.clear();
  for (auto finalizer = finalizers.rbegin(); finalizer != finalizers.rend(); ++finalizer) {
    (*finalizer)();
  }
}

}  // namespace weft::tools
