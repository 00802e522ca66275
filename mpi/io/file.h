// A file (MPI_File): each rank of the opening communicator holds its own handle, with what MPI
// keeps per process (its view, its individual file pointer, its error handler) and its own
// descriptor of the file, so that its byte-range locks (atomic mode) are its own. What the ranks
// share lives in memory every rank of the communicator maps (rma/shared_memory.h), across the
// processes of the node too: the shared file pointer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/view.h"
#include "mpi.h"
#include "rma/shared_memory.h"
#include "weft/sync.h"

struct weft_mpi_file {
  // A closed file stays as a tombstone so that a later use is caught (MPI_ERR_FILE).
  static constexpr std::uint32_t kLive = 0x46494c45, kClosed = 0x434c5344;
  std::uint32_t magic = kLive;

  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the user's: the file's own collectives
  int rank = 0;
  int size = 0;
  int fd = -1;
  std::string filename;
  int amode = 0;
  bool atomic = false;
  MPI_Errhandler errhandler = MPI_ERRORS_RETURN;
  std::vector<std::pair<std::string, std::string>> hints;  // in effect, in the order set

  weft::mpi::io::View view;
  MPI_Offset pointer = 0;  // the individual file pointer, in etypes of the view

  // The shared file pointer (in etypes of the view) at the start of the shared memory.
  weft::mpi::rma::SharedMemory shared_memory;
  std::atomic<MPI_Offset>* shared_pointer = nullptr;

  // Collective calls so far: the next one's number, the same on every rank (nonblocking ones
  // take theirs when issued, so that they meet in the order they were issued).
  std::uint64_t collectives = 0;
  // The nonblocking operations of this rank run one after another, in the order issued: each
  // waits for the previous one's event.
  std::shared_ptr<weft::Event> last_operation;

  // A split collective between its _begin and its _end: its buffer, and the nonblocking access
  // under way (MPI_REQUEST_NULL for an ordered one, done in _begin: its status and result).
  struct Split {
    bool active = false;
    const void* buffer = nullptr;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Status status{};
    int rc = MPI_SUCCESS;
  } split;
};

namespace weft::mpi::io {

using File = weft_mpi_file;

// Which comm ranks of the file's communicator this process holds, ascending; the first is the
// aggregator of the process in collective calls.
const std::vector<int>& local_ranks(const File& file);

}  // namespace weft::mpi::io
