#include "rma/exposed_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace weft::mpi::rma {

namespace {

std::atomic<std::uint32_t> segments_made{0};  // names this process's segments apart

std::string segment_name(pid_t pid, std::uint32_t segment) {
  return "/weft-win-" + std::to_string(pid) + "-" + std::to_string(segment);
}

std::uintptr_t page_size() {
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// glibc's malloc (malloc/malloc.c, "chunk" layout): a block it mapped for itself follows a 16-byte
// header, the block's offset from its mapping's start and its size with bit 1 (IS_MMAPPED) set,
// and has that mapping to itself. True when [base, base + size) lies in such a block. The header
// is read only where it shares the window's first page (so the read cannot fault); a window
// elsewhere that happens to look like one is still checked against the process's mappings.
// Not instrumented: under AddressSanitizer the header is its allocator's redzone (and does not
// match, so nothing moves).
__attribute__((no_sanitize("address"))) bool in_mapped_block(std::uintptr_t base,
                                                             std::size_t size) {
  const std::uintptr_t page = page_size();
  if (base % 16 != 0 || base % page < 16) return false;
  const auto* header = reinterpret_cast<const volatile std::uint64_t*>(base - 16);
  const std::uint64_t offset = header[0];
  const std::uint64_t word = header[1];
  const std::uint64_t bytes = word & ~std::uint64_t{7};
  constexpr std::uint64_t kMapped = 2;
  if ((word & kMapped) == 0 || bytes < 16 || offset > base - 16) return false;
  const std::uintptr_t mapping = base - 16 - offset;
  return mapping % page == 0 && (offset + bytes) % page == 0 && base + size <= base - 16 + bytes;
}

// Every page of [lo, hi) is private anonymous writable memory (the heap, a large malloc, a
// stack): nothing another mapping or a file sees.
bool private_anonymous(std::uintptr_t lo, std::uintptr_t hi) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::uintptr_t covered = lo;
  while (std::getline(maps, line)) {
    std::uintptr_t start = 0, end = 0;
    unsigned long long offset = 0, inode = 0;
    char perms[8] = {};
    unsigned major = 0, minor = 0;
    int path = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %7s %llx %x:%x %llu %n", &start, &end,
                    perms, &offset, &major, &minor, &inode, &path) < 7) {
      return false;
    }
    if (end <= covered) continue;
    if (start > covered) return false;  // a hole
    const std::string name = path > 0 ? line.substr(static_cast<std::size_t>(path)) : "";
    const bool anonymous = inode == 0 && (name.empty() || name == "[heap]");
    if (!anonymous || perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p') return false;
    covered = end;
    if (covered >= hi) return true;
  }
  return false;
}

}  // namespace

Exposure ExposedMemory::expose(std::byte* base, std::size_t size) {
  restore();
  const std::uintptr_t page = page_size();
  const auto begin = reinterpret_cast<std::uintptr_t>(base);
  const std::uintptr_t end = begin + size;
  if (size == 0) return {};
  const bool alone = in_mapped_block(begin, size);
  const std::uintptr_t lo =
      begin % page == 0 || alone ? begin / page * page : (begin + page - 1) / page * page;
  const std::uintptr_t hi =
      end % page == 0 || alone ? (end + page - 1) / page * page : end / page * page;
  if (hi <= lo || !private_anonymous(lo, hi)) return {};

  const std::uint32_t segment = segments_made.fetch_add(1, std::memory_order_relaxed);
  const std::string name = segment_name(getpid(), segment);
  const std::size_t length = hi - lo;
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return {};
  // The pages hold only the window's bytes, which nothing changes while the owner is in
  // MPI_Win_create: the copy and the mapping over them are seen as one. mmap rather than mremap:
  // UCX's memory hooks (libucm, which sees every mmap of the process to keep its registration
  // cache right) drop mremap's new address in UCX 1.13 and would move the pages to address 0.
  void* copy = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(length)) == 0) {
    copy = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  void* moved = MAP_FAILED;
  if (copy != MAP_FAILED) {
    std::memcpy(copy, reinterpret_cast<void*>(lo), length);
    moved = mmap(reinterpret_cast<void*>(lo), length, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_FIXED, fd, 0);
    munmap(copy, length);
  }
  close(fd);
  if (moved == MAP_FAILED) {
    // The old pages are still there: a MAP_FIXED mmap checks its arguments and limits before
    // it unmaps what it replaces.
    shm_unlink(name.c_str());
    return {};
  }
  exposure_ = {lo, length, segment};
  named_ = true;
  return exposure_;
}

void ExposedMemory::unlink() {
  if (!named_) return;
  shm_unlink(segment_name(getpid(), exposure_.segment).c_str());
  named_ = false;
}

void ExposedMemory::restore() {
  unlink();
  if (exposure_.empty()) return;
  const std::size_t length = exposure_.length;
  void* pages = reinterpret_cast<void*>(exposure_.pages);
  exposure_ = {};
  void* saved = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  // Without memory for the copy the pages stay on the segment: the same bytes, only shared.
  if (saved == MAP_FAILED) return;
  std::memcpy(saved, pages, length);
  // Fresh private pages at the same addresses, then the bytes back into them (two copies: see
  // expose() on mremap).
  if (mmap(pages, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
      MAP_FAILED) {
    std::memcpy(pages, saved, length);
  }
  munmap(saved, length);
}

std::string PeerPages::map(pid_t pid, const Exposure& exposure) {
  unmap();
  const std::string name = segment_name(pid, exposure.segment);
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) return "cannot open " + name + ": " + std::strerror(errno);
  void* mapping = mmap(nullptr, exposure.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  close(fd);
  if (mapping == MAP_FAILED) return "cannot map " + name + ": " + std::strerror(error);
  data_ = static_cast<std::byte*>(mapping);
  length_ = exposure.length;
  pages_ = exposure.pages;
  return {};
}

void PeerPages::unmap() {
  if (data_ == nullptr) return;
  munmap(data_, length_);
  data_ = nullptr;
  length_ = 0;
}

}  // namespace weft::mpi::rma
