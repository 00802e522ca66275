#include "rma/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

#include "comm/communicator.h"

namespace weft::mpi::rma {

struct SharedMemory::HeapBlock {
  std::atomic<int> references;
  std::size_t bytes;
};

namespace {

constexpr std::size_t kHeader = 64;  // keeps the data a cache line aligned
constexpr int kNameLength = 64;

std::atomic<unsigned> segments_made{0};  // names this process's segments apart

// Broadcasts `text` (shorter than kNameLength) from comm rank 0.
void broadcast_text(char (&text)[kNameLength], MPI_Comm comm) {
  PMPI_Bcast(text, kNameLength, MPI_CHAR, 0, comm);
}

}  // namespace

std::string SharedMemory::create(MPI_Comm comm, std::size_t bytes) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  bytes_ = bytes;
  if (!comm->spans_processes) {
    // One address space: comm rank 0 allocates and hands the others its address.
    HeapBlock* block = nullptr;
    if (rank == 0) {
      int size = 0;
      PMPI_Comm_size(comm, &size);
      void* memory = ::operator new (kHeader + bytes, std::align_val_t{kHeader});
      std::memset(memory, 0, kHeader + bytes);
      block = new (memory) HeapBlock{{size}, bytes};
    }
    PMPI_Bcast(&block, sizeof block, MPI_BYTE, 0, comm);
    heap_ = block;
    data_ = reinterpret_cast<std::byte*>(block) + kHeader;
    return {};
  }
  // Across processes: comm rank 0 makes a segment and names it; every rank maps it; rank 0
  // unlinks it once all have.
  char name[kNameLength] = {};
  int fd = -1;
  if (rank == 0) {
    std::snprintf(name, sizeof name, "/weft-rma-%d-%u", static_cast<int>(getpid()),
                  segments_made.fetch_add(1, std::memory_order_relaxed));
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      std::snprintf(name, sizeof name, "!%s", std::strerror(errno));
    }
  }
  broadcast_text(name, comm);
  std::string error;
  if (name[0] == '!') {
    error = std::string("cannot make a shared memory segment: ") + (name + 1);
  } else {
    if (rank != 0) fd = shm_open(name, O_RDWR, 0600);
    const std::size_t length = bytes == 0 ? 1 : bytes;
    void* mapping =
        fd < 0 ? MAP_FAILED : mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED) {
      error =
          std::string("cannot map the shared memory segment ") + name + ": " + std::strerror(errno);
    } else {
      data_ = static_cast<std::byte*>(mapping);
      mapped_ = length;
    }
  }
  if (fd >= 0) close(fd);
  // Every rank learns whether all mapped it.
  int failed = error.empty() ? 0 : 1, any_failed = 0;
  PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
  if (rank == 0 && name[0] == '/') shm_unlink(name);
  if (any_failed != 0) {
    release();
    if (error.empty()) error = "another rank could not map the shared memory segment";
  }
  return error;
}

void SharedMemory::release() {
  if (heap_ != nullptr) {
    // acq_rel: the last one frees memory the others wrote.
    if (heap_->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      heap_->~HeapBlock();
      ::operator delete (heap_, std::align_val_t{kHeader});
    }
    heap_ = nullptr;
  } else if (mapped_ != 0) {
    munmap(data_, mapped_);
    mapped_ = 0;
  }
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace weft::mpi::rma
