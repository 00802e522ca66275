// MPI_Comm_join (MPI-4.1 11.10.5): the two ranks at the ends of a connected socket swap, over the
// socket, who they are (their world ranks in this job) and a proposal for the new
// intercommunicator's context; each then takes its side of a communicator of the two. Reads and
// writes of a rank's thread go through the I/O manager, so a rank that waits for its peer leaves
// its core to the others.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "comm/intercomm.h"
#include "errhan/error.h"
#include "init/world.h"
#include "util/profiling.h"

namespace {

// What each end writes: a mark that it is weft's join, the rank and the proposed context.
struct Hello {
  char mark[8] = {'w', 'e', 'f', 't', 'j', 'o', 'i', 'n'};
  std::int32_t world_rank = -1;
  std::uint32_t context = 0;
};

// An empty string when all went through, else what failed.
std::string write_all(int fd, const void* data, std::size_t size) {
  const char* at = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::string("writing to it failed: ") + std::strerror(errno);
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

std::string read_all(int fd, void* data, std::size_t size) {
  char* at = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return "the peer closed it before it said who it is";
    if (n < 0) return std::string("reading from it failed: ") + std::strerror(errno);
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace

extern "C" int PMPI_Comm_join(int fd, MPI_Comm* intercomm) {
  constexpr std::string_view kFunction = "MPI_Comm_join";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (intercomm == nullptr) {
    return weft::mpi::raise(MPI_COMM_NULL, kFunction, MPI_ERR_ARG,
                            "intercomm = NULL, expected where to store the intercommunicator");
  }
  *intercomm = MPI_COMM_NULL;
  Hello mine;
  mine.world_rank = weft::mpi::caller_world_rank();
  mine.context = weft::mpi::allocate_context();
  Hello theirs;
  std::string failure = write_all(fd, &mine, sizeof mine);
  if (failure.empty()) failure = read_all(fd, &theirs, sizeof theirs);
  if (failure.empty() && std::memcmp(theirs.mark, mine.mark, sizeof mine.mark) != 0) {
    failure = "the peer is no rank of a weft job calling MPI_Comm_join";
  }
  if (failure.empty() && theirs.world_rank == mine.world_rank) {
    failure = "both ends belong to this rank, expected another rank at the other end";
  }
  if (!failure.empty()) {
    return weft::mpi::raise(MPI_COMM_NULL, kFunction, MPI_ERR_OTHER,
                            "fd = " + std::to_string(fd) + ": " + failure);
  }
  *intercomm = weft::mpi::inter::adopt_side(
      {mine.world_rank}, {theirs.world_rank}, std::max(mine.context, theirs.context),
      weft::mpi::allocate_context(), mine.world_rank < theirs.world_rank);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_join);
