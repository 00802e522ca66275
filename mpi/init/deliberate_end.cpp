// Telling the launcher why this process ends (weft/mpi_job.h, report_deliberate_end_to): on
// purpose, or because it lost a peer process. When a process of a job ends, its peers' sends to it
// fail and they end too; weftrun may find both ended at the same look, or the peer first, and must
// know which end was the cause.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "init/fatal.h"
#include "weft/mpi_job.h"
#include "weft/process_end.h"

namespace weft::mpi {

namespace {

// Set once by the program loader before any rank runs; relaxed is enough for a value written
// before the ranks' threads exist.
std::atomic<int> report_fd{-1};

}  // namespace

void report_deliberate_end_to(int fd) {
  report_fd.store(fd, std::memory_order_relaxed);
}

void end_job_deliberately(std::string_view message, int status) noexcept {
  // One record at most: the thread that ends the process tells why.
  claim_process_end();
  const int fd = report_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    status &= 0xff;
    const char record[2] = {kDeliberateEnd, static_cast<char>(status == 0 ? 1 : status)};
    // The system call itself: libweft's write() may park a user thread.
    [[maybe_unused]] const long wrote = ::syscall(SYS_write, fd, record, sizeof record);
  }
  end_job(message, status);
}

void end_job_lost_process(int process, std::string_view message) noexcept {
  claim_process_end();
  const int fd = report_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    char record[1 + sizeof(std::int32_t)] = {kLostProcess};
    const std::int32_t lost = process;
    std::memcpy(record + 1, &lost, sizeof lost);
    [[maybe_unused]] const long wrote = ::syscall(SYS_write, fd, record, sizeof record);
  }
  end_job(message, 1);
}

}  // namespace weft::mpi
