#include "io/access.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "io/datarep.h"
#include "weft/io.h"

namespace weft::mpi::io {

namespace {

// The pieces of the access's stream bytes [start, start + bytes): the view's file extents zipped
// with the memory blocks.
void make(const View& view, const Access& access, MPI_Offset start, std::size_t bytes,
          std::vector<Piece>& out) {
  std::vector<Extent> extents;
  view.map(start, bytes, extents);
  auto skip = static_cast<std::size_t>(start - access.position);  // into the memory stream
  if (access.memory.size() == 1) {
    // One memory block (a contiguous buffer, or the staging copy): each file extent is a piece,
    // its memory the next bytes of the block. Made apart from the general zip because a
    // collective write of a subarray has hundreds of thousands of pieces.
    out.reserve(out.size() + extents.size());
    std::byte* at = access.base + access.memory.front().offset + skip;
    for (const Extent& extent : extents) {
      out.push_back({extent.offset, at, extent.length});
      at += extent.length;
    }
    return;
  }
  // Zip the two streams: each piece is the overlap of a file extent and a memory block.
  auto m = static_cast<std::size_t>(
      std::upper_bound(access.memory_ends.begin(), access.memory_ends.end(), skip) -
      access.memory_ends.begin());
  std::size_t m_used =
      m < access.memory.size() ? skip - (access.memory_ends[m] - access.memory[m].length) : 0;
  for (const Extent& extent : extents) {
    std::size_t done = 0;
    while (done < extent.length) {
      const Extent& block = access.memory[m];
      const std::size_t take = std::min(extent.length - done, block.length - m_used);
      out.push_back({extent.offset + static_cast<MPI_Offset>(done),
                     access.base + block.offset + m_used, take});
      done += take;
      m_used += take;
      if (m_used == block.length) {
        ++m;
        m_used = 0;
      }
    }
  }
}

}  // namespace

bool plan(const File& file, MPI_Offset position, const void* buffer, std::size_t count,
          MPI_Datatype datatype, bool write, Access& access, int& error_class, std::string& error,
          bool defer) {
  access.bytes = count * datatype->size();
  access.position = position;
  if (access.bytes == 0) return true;
  if (file.view.tile_size == 0) {
    error_class = MPI_ERR_TYPE;
    error = "the view's filetype holds no data, so it cannot place " +
            std::to_string(access.bytes) + " bytes";
    return false;
  }
  // The memory side as one stream: the buffer's blocks, or the staging copy in the file's
  // representation.
  access.base = static_cast<std::byte*>(const_cast<void*>(buffer));
  if (file.view.datarep != "native") {
    access.staged = true;
    access.staging.resize(access.bytes);
    if (write) {
      if (int rc = to_file(file.view.datarep, buffer, count, datatype, access.staging.data(), 0);
          rc != MPI_SUCCESS) {
        error_class = rc;
        error = "the conversion to data representation \"" + file.view.datarep + "\" failed";
        return false;
      }
    }
    access.base = access.staging.data();
    access.memory.push_back({0, access.bytes});
  } else {
    access.memory = flatten(datatype, count);
  }
  if (access.memory.size() > 1) {
    access.memory_ends.reserve(access.memory.size());
    std::size_t end = 0;
    for (const Extent& block : access.memory) access.memory_ends.push_back(end += block.length);
  }
  if (defer && file.view.monotonic) {
    access.deferred = true;
    access.low = file.view.byte_offset(position);
    access.high = file.view.byte_offset(position + static_cast<MPI_Offset>(access.bytes) - 1) + 1;
    return true;
  }
  make(file.view, access, position, access.bytes, access.pieces);
  return true;
}

void pieces_in(const View& view, const Access& access, MPI_Offset from, MPI_Offset to,
               std::vector<Piece>& out) {
  if (access.bytes == 0 || to <= access.low || from >= access.high) return;
  const MPI_Offset end = access.position + static_cast<MPI_Offset>(access.bytes);
  const MPI_Offset first = std::max(access.position, view.position_of(from));
  const MPI_Offset last = std::min(end, view.position_of(to));
  if (first < last) make(view, access, first, static_cast<std::size_t>(last - first), out);
}

std::size_t estimated_pieces(const View& view, const Access& access) {
  const bool dense =
      view.blocks.size() == 1 && static_cast<MPI_Offset>(view.blocks[0].length) == view.extent;
  const std::size_t extents =
      dense ? 1 : (access.bytes + view.tile_size - 1) / view.tile_size * view.blocks.size();
  return std::max(extents, access.memory.size());
}

void unstage(const File& file, Access& access, void* buffer, std::size_t count,
             MPI_Datatype datatype) {
  if (access.staged) {
    from_file(file.view.datarep, access.staging.data(), buffer, count, datatype, 0);
  }
}

long long transfer(int fd, const std::vector<Piece>& pieces, bool write) {
  long long moved = 0;
  // Where the first read cut short by the end of the file stopped; the runs after it are still
  // read (pieces of several ranks may overlap or come in any order).
  long long first_short = -1;
  std::vector<iovec> iov;
  std::size_t i = 0;
  while (i < pieces.size()) {
    // A run of pieces adjacent in the file: one call (IOV_MAX vectors at most).
    const MPI_Offset start = pieces[i].file;
    MPI_Offset end = start;
    iov.clear();
    std::size_t run_bytes = 0;
    while (i < pieces.size() && pieces[i].file == end && iov.size() < IOV_MAX) {
      iov.push_back({pieces[i].memory, pieces[i].length});
      end += static_cast<MPI_Offset>(pieces[i].length);
      run_bytes += pieces[i].length;
      ++i;
    }
    std::size_t done = 0;
    std::size_t first = 0;
    while (done < run_bytes) {
      const ssize_t n =
          write ? ::pwritev(fd, iov.data() + first, static_cast<int>(iov.size() - first),
                            start + static_cast<MPI_Offset>(done))
                : ::preadv(fd, iov.data() + first, static_cast<int>(iov.size() - first),
                           start + static_cast<MPI_Offset>(done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return -1;
      }
      if (n == 0) {
        if (write) {
          errno = ENOSPC;
          return -1;
        }
        if (first_short < 0) first_short = moved + static_cast<long long>(done);
        break;  // the end of the file
      }
      done += static_cast<std::size_t>(n);
      // Skip the vectors the call filled; shorten the one it stopped in.
      auto left = static_cast<std::size_t>(n);
      while (left > 0 && left >= iov[first].iov_len) {
        left -= iov[first].iov_len;
        ++first;
      }
      if (left > 0) {
        iov[first].iov_base = static_cast<std::byte*>(iov[first].iov_base) + left;
        iov[first].iov_len -= left;
      }
    }
    moved += static_cast<long long>(run_bytes);
  }
  return first_short >= 0 ? first_short : moved;
}

namespace {

// Atomic mode: a lock on the byte range the access spans, held by this rank's descriptor (an
// open file description lock, so ranks of one process exclude each other too).
class RangeLock {
 public:
  RangeLock(int fd, const std::vector<Piece>& pieces, bool write) : fd_(fd) {
    if (pieces.empty()) return;
    MPI_Offset low = pieces.front().file, high = low;
    for (const Piece& piece : pieces) {
      low = std::min(low, piece.file);
      high = std::max(high, piece.file + static_cast<MPI_Offset>(piece.length));
    }
    lock_ = {};
    lock_.l_type = write ? F_WRLCK : F_RDLCK;
    lock_.l_whence = SEEK_SET;
    lock_.l_start = low;
    lock_.l_len = high - low;
    while (::fcntl(fd_, F_OFD_SETLKW, &lock_) != 0 && errno == EINTR) {
    }
    held_ = true;
  }
  ~RangeLock() {
    if (!held_) return;
    lock_.l_type = F_UNLCK;
    ::fcntl(fd_, F_OFD_SETLK, &lock_);
  }
  RangeLock(const RangeLock&) = delete;
  RangeLock& operator=(const RangeLock&) = delete;

 private:
  int fd_;
  struct flock lock_ {};
  bool held_ = false;
};

}  // namespace

long long transfer_managed(const File& file, const std::vector<Piece>& pieces, bool write) {
  if (pieces.empty()) return 0;
  const int fd = file.fd;
  if (file.atomic) {
    // The lock may wait for another rank's access: always on a spare kernel thread.
    return weft::io::blocking_call([&] {
      long long n = 0;
      int saved = 0;
      {
        RangeLock lock(fd, pieces, write);
        n = transfer(fd, pieces, write);
        saved = errno;
      }
      errno = saved;  // the unlock must not hide the transfer's error
      return n;
    });
  }
  return move(fd, pieces, write);
}

long long move(int fd, const std::vector<Piece>& pieces, bool write) {
  std::size_t bytes = 0;
  for (const Piece& piece : pieces) bytes += piece.length;
  // A read goes through libweft's preadv, which tries without blocking on the caller's core and
  // hands the call to a spare kernel thread only when the data must come from the disk; a small
  // write into the page cache is made on the caller's core, as the I/O manager makes write(2) to
  // a regular file (docs/io_manager.md): a hand-off costs two kernel-thread wake-ups. A large
  // write may wait for the kernel's write-back: on a spare thread.
  if (!write || bytes < kDirectWriteBytes) return transfer(fd, pieces, write);
  return weft::io::blocking_call([&] { return transfer(fd, pieces, write); });
}

void set_status(MPI_Status* status, long long bytes) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->weft_cancelled = 0;
  status->weft_bytes = bytes;
}

}  // namespace weft::mpi::io
