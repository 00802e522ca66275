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
  return " (each rank's copy takes two memory mappings and its stack two more; vm.max_map_count "
         "is " +
         std::to_string(limit) + ")";
}

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
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_LOAD) continue;
    // A segment is one file mapping, plus an anonymous one for a .bss beyond its last file page.
    const std::uint64_t file_end = (segment.p_vaddr + segment.p_filesz + page - 1) / page;
    const std::uint64_t memory_end = (segment.p_vaddr + segment.p_memsz + page - 1) / page;
    image.mappings_per_copy_ += memory_end > file_end ? 2 : 1;
  }
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type == PT_GNU_RELRO && image.finalizers_.address >= segment.p_vaddr &&
        image.finalizers_.address < segment.p_vaddr + segment.p_memsz) {
      image.finalizers_read_only_ = true;
    }
    if (segment.p_type == PT_GNU_RELRO) {
      ++image.mappings_per_copy_;  // mprotect splits a mapping
      image.relro_ = true;
    }
  }
  image.find_comm_references(segments);
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

ProgramImage::Copy ProgramImage::load(int rank, Binding binding) const {
  const std::string who = "rank " + std::to_string(rank);
  // The kernel names the mapping after it: /proc/self/maps shows whose copy a page belongs to.
  const std::string name = "weft-" + who;
  FileDescriptor file(::memfd_create(name.c_str(), MFD_CLOEXEC));
  if (file.get() < 0) throw Error(system_error(who + ": cannot create its copy of the program"));
  for (std::size_t done = 0; done < bytes_.size();) {
    const ssize_t wrote = ::write(file.get(), bytes_.data() + done, bytes_.size() - done);
    if (wrote < 0) throw Error(system_error(who + ": cannot write its copy of the program"));
    done += static_cast<std::size_t>(wrote);
  }
  const std::string path = unique_path(loads++, file.get());
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const std::string reason = dl_error();
    throw Error(who + ": cannot load its copy of the program: " + reason +
                (reason.find("map") != std::string::npos ? map_count_hint() : ""));
  }
  void* main = ::dlsym(handle, "main");
  if (main == nullptr) {
    throw Error(who + ": the program's copy has no visible main function (" + dl_error() + ")");
  }
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) {
    throw Error(who + ": cannot locate its copy of the program (" + dl_error() + ")");
  }
  char* base = reinterpret_cast<char*>(map->l_addr);
  // The copy's __thread variables then belong to each user thread that runs its code (OpenMP
  // workers and the rank share cores), not to the kernel thread.
  std::size_t tls_module = 0;
  if (::dlinfo(handle, RTLD_DI_TLS_MODID, &tls_module) == 0 && tls_module != 0) {
    give_each_thread_own_tls(tls_module);
  }

  // weftcc links -z norelro: the GOT and data stay writable after relocation (another linker's
  // RELRO pages are opened again).
  for (const CommReference& reference : comm_references_) {
    void* object = reference.self ? binding.self : binding.world;
    if (object == nullptr) continue;
    if (relro_) {
      const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
      const auto begin = reinterpret_cast<std::uintptr_t>(base + reference.offset) & ~(page - 1);
      if (::mprotect(reinterpret_cast<void*>(begin), page, PROT_READ | PROT_WRITE) != 0) {
        throw Error(system_error(who + ": cannot bind MPI_COMM_WORLD of its copy"));
      }
    }
    char* target = static_cast<char*>(object) + reference.addend;
    std::memcpy(base + reference.offset, &target, sizeof target);
  }

  auto* finalizers = reinterpret_cast<Copy::Finalizer*>(base + finalizers_.address);
  if (finalizers_read_only_ && finalizers_.count > 0) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(finalizers) & ~(page - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(finalizers + finalizers_.count);
    if (::mprotect(reinterpret_cast<void*>(begin), end - begin, PROT_READ | PROT_WRITE) != 0) {
      throw Error(system_error(who + ": cannot take over the finalizers of its copy"));
    }
  }
  std::vector<Copy::Finalizer> saved(finalizers, finalizers + finalizers_.count);
  std::fill(finalizers, finalizers + finalizers_.count, &finalizer_done);
  return Copy(reinterpret_cast<MainFunction>(main),
              reinterpret_cast<Copy::Constructor*>(base + constructors_.address),
              constructors_.count, std::move(saved));
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
