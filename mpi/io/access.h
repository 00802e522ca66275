// Moving data between memory and a file: one access of a rank (its file extents through its view,
// its memory blocks through its datatype) and the system calls that carry it out.
//
// The calls go through the I/O manager (move() below): a spare kernel thread makes the preadv or
// pwritev calls that may wait while the calling rank's thread is parked, so the rank's core runs
// its other threads (another rank, an OpenMP worker) meanwhile.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "io/file.h"
#include "io/view.h"
#include "mpi.h"

namespace weft::mpi::io {

// A memory run: where the bytes are, in the order they go to or come from the file.
struct Piece {
  MPI_Offset file;  // file offset
  std::byte* memory;
  std::size_t length;
};

// The pieces of one access: `count` elements of `datatype` at `buffer`, to or from the view's
// data bytes starting at `position` (a byte of the view's stream). `staging` holds the data in
// the file's representation when the view's datarep is not native (filled for a write; for a read
// the caller converts it into the buffer afterwards).
struct Access {
  std::vector<Piece> pieces;  // in stream order
  std::size_t bytes = 0;      // the data bytes of the access
  std::vector<std::byte> staging;
  bool staged = false;
  // What the pieces are made from: the access's first byte in the view's stream, and the memory
  // stream's blocks (from `base`) with the running data size up to the end of each.
  MPI_Offset position = 0;
  std::byte* base = nullptr;
  std::vector<Extent> memory;
  std::vector<std::size_t> memory_ends;
  // Made by plan() with `defer`: no pieces yet (make them with pieces_in()), only the range of
  // the file the access touches, [low, high).
  bool deferred = false;
  MPI_Offset low = 0, high = 0;
};

// Builds the access; false with `error` set when the view cannot hold it (a filetype without data).
// With `defer`, and a view whose file offsets increase with its stream (View::monotonic), the
// pieces are left to pieces_in(): a collective write makes them window by window once the ranks
// have met, instead of every rank mapping its whole view before the first byte moves.
bool plan(const File& file, MPI_Offset position, const void* buffer, std::size_t count,
          MPI_Datatype datatype, bool write, Access& access, int& error_class, std::string& error,
          bool defer = false);

// Appends to `out` the pieces of a deferred access that lie in the file's [from, to), in file
// order.
void pieces_in(const View& view, const Access& access, MPI_Offset from, MPI_Offset to,
               std::vector<Piece>& out);

// An estimate of the pieces a deferred access makes: its file extents or its memory blocks,
// whichever are more.
std::size_t estimated_pieces(const View& view, const Access& access);

// After a staged read: converts the file representation into the buffer.
void unstage(const File& file, Access& access, void* buffer, std::size_t count,
             MPI_Datatype datatype);

// Carries out `pieces` (sorted or not) on `fd`, adjacent ones merged into one preadv/pwritev.
// Returns the bytes moved in order before the first read cut short by the end of the file (the
// later pieces are still read), or -1 with errno set. Made on the calling thread (see move()).
long long transfer(int fd, const std::vector<Piece>& pieces, bool write);

// The same through the I/O manager (below), with the byte-range lock of atomic mode around it.
long long transfer_managed(const File& file, const std::vector<Piece>& pieces, bool write);

// transfer() so that the calling rank's core runs its other threads while the call waits: reads
// through libweft's preadv (a spare kernel thread when the data must come from the disk), writes
// of kDirectWriteBytes and more on a spare kernel thread, smaller ones on the caller's core.
inline constexpr std::size_t kDirectWriteBytes = std::size_t{256} << 10;
long long move(int fd, const std::vector<Piece>& pieces, bool write);

// Fills `status` (may be MPI_STATUS_IGNORE) for an access that moved `bytes`.
void set_status(MPI_Status* status, long long bytes);

}  // namespace weft::mpi::io
