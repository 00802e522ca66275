// ROMIO's collective buffering, pipelined: the pieces of a collective write are copied into a
// collective buffer one file window (up to cb_buffer_size bytes, growing from a small first one,
// aligned to the file system's block or the striping unit) at a time, and each full window goes
// to the file as one large aligned pwrite. Two buffers alternate: while the writer's pwrite of
// window w runs (on its own core when another core of its node fills, else on a spare kernel thread
// through the I/O manager's hand-off, so that the writer's core is free), the other participants
// (the ranks of the process) copy the pieces of window w + 1 into the other buffer, each taking one
// list of pieces at a time.
//
// The kernel's cost of a pwritev grows with its vectors (each is copied into the page cache on
// its own); the participants' copies cost about as much but run in parallel with the kernel's
// copy of the previous window, so the file sees one large write per window.
//
// A window whose pieces are large enough (kDirectVectorBytes on average), where the writer has no
// other core filling for it, is not copied at all:
// its plan lists the pieces as vectors pointing into the ranks' own memory, and the writer hands
// them to pwritev, so that the window's bytes are copied once, by the kernel, as the disk's own
// write copies them. Every participant's memory is addressable here (the ranks of a process, or
// a head's receive buffers), and none returns from the call before the writer is done.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "io/access.h"
#include "io/file.h"
#include "weft/sync.h"

namespace weft::mpi::io {

// The size of a collective buffer (the cb_buffer_size hint, else kDefaultBufferBytes) and the
// alignment of the file windows (the striping_unit hint, else the file system's block size).
//
// The first window is `first_window_bytes` (0: `buffer_bytes`) and each next one twice the
// previous, up to `buffer_bytes`: nothing reaches the kernel before the first window is planned
// and filled, which at 4 MiB took the fillers about a tenth of a 16 MiB call while the writer's
// core had nothing to write; a small first window starts the kernel's copy at once and the
// doubling keeps the fills of the next window under the write of the previous one.
struct BufferGeometry {
  std::size_t buffer_bytes = 0;  // a multiple of `alignment`
  std::size_t alignment = 0;
  std::size_t first_window_bytes = 0;  // a multiple of `alignment`, at most `buffer_bytes`
};
inline constexpr std::size_t kDefaultBufferBytes = std::size_t{4} << 20;
inline constexpr std::size_t kFirstWindowBytes = std::size_t{256} << 10;
BufferGeometry buffer_geometry(const File& file);

// A window whose pieces average this many bytes or more (its span, holes counted, over its
// pieces) goes to the file with pwritev straight from the pieces' memory instead of through a
// collective buffer. The kernel's cost per vector (about 15 to 25 ns here) against one pwrite
// of the same bytes: a pwritev of 512-byte vectors takes 1.1 times the CPU of a contiguous
// pwrite, where the participants' copy and the pwrite take 1.5 to 1.7 times; at 384 bytes the
// pwritev takes 1.37 times and at 256 bytes 1.45, more than the writer's contiguous pwrite of a
// pipeline whose copies run on the other cores (docs/mpi-io.md, "One copy: windows written from
// the ranks' memory", bench/run pwritev). The bound sits below 512 so that pieces of 512 bytes
// stay direct where a window's edges cut two of them or a few smaller ones (a header) mix in.
// Holes only favour the direct write: a window with holes is written range by range either way.
// Only where the writer is alone (one core, its pwrite calls on spare kernel threads): where it
// writes on its own core while the other cores fill, the copies cost it nothing, and its pwritev
// costs it 1.15 to 1.2 times the pwrite of the filled window, at 512-byte vectors and at 4 KiB
// alike, in IOV_MAX calls (docs/mpi-io.md, "Ranges first"), the gap the issue leaves at 8 ranks.
inline constexpr std::size_t kDirectVectorBytes = 448;

// Where a list of pieces lies, and whether its pieces increase in file offset without
// overlapping (it is then one run as it is). Each rank finds its own before the meeting, in
// parallel with the others, so that the collective write does not scan every piece on one core
// before the first byte moves.
struct Shape {
  MPI_Offset low = 0, high = 0;  // high <= low: no bytes
  std::size_t bytes = 0;         // of the pieces
  bool ordered = true;
};
Shape shape_of(std::span<const Piece> pieces);

// A participant's pieces made on demand, those of one window at a time: a rank of a collective
// write publishes the range of its access (its Shape) and makes no piece before the ranks meet,
// so that the first window is planned and written as soon as the ranges are known, while the
// pieces of the later windows are made by the plans running beside the writes.
class PieceSource {
 public:
  // Appends the pieces that lie in the file's [from, to), in increasing file offset, none
  // overlapping another.
  virtual void pieces_in(MPI_Offset from, MPI_Offset to, std::vector<Piece>& out) const = 0;

 protected:
  ~PieceSource() = default;
};

// One collective write carried out by a fixed set of participants (weft threads) that all call
// run(); exactly one of them is the writer.
class BufferedWrite {
 public:
  // `sources`: lists of pieces in any order (each is cut here into runs whose pieces increase in
  // file offset without overlapping). Where pieces of several lists overlap, the bytes of the
  // later list are the ones written. The pieces' memory must stay valid until every participant
  // has returned from run(). `shapes`, when given, holds each source's shape_of(). `makers`,
  // when given, holds for each source nullptr or the PieceSource that makes its pieces window by
  // window (its list is then empty and its shape, required, is the range it touches).
  BufferedWrite(int fd, const std::vector<std::span<const Piece>>& sources,
                const BufferGeometry& geometry, std::span<const Shape> shapes = {},
                std::span<const PieceSource* const> makers = {});
  ~BufferedWrite();
  BufferedWrite(const BufferedWrite&) = delete;
  BufferedWrite& operator=(const BufferedWrite&) = delete;

  // Made by the writer, on its own thread, before it publishes the write to the others (run(true)
  // makes it otherwise): where the writer makes its pwrite calls on its own core, the
  // participants that share that core fill nothing (run() returns at once for them), so that
  // the writer never waits behind them for its core.
  void claim_writer();
  // Copies pieces into the buffers (and, for the writer, writes the full windows) until no work
  // is left; the writer returns when every window is in the file or one failed. Returns the
  // fills this participant made: runs of pieces copied into one window's buffer.
  std::size_t run(bool writer);
  // 0, or the errno of the first failed write (the windows after it are not written).
  int error() const { return error_; }
  // The windows written straight from the pieces' memory (kDirectVectorBytes), once run() of the
  // writer has returned.
  std::size_t direct_windows() const { return direct_windows_; }

 private:
  struct Window;
  struct Task {
    std::size_t window;
    std::size_t index;  // a run of sources_, or sources_.size() for the window's plan
  };

  bool take(Task& task);  // under mutex_
  void perform(const Task& task);
  void finish(const Task& task);  // under mutex_
  void fill_done(std::size_t w);  // under mutex_: one more run of window w is in its buffer
  void plan(std::size_t w);
  void fill(std::size_t w, std::size_t run);
  void write(std::size_t w);
  int write_buffer(std::size_t w) const;
  int write_direct(Window& window);
  std::byte* buffer_of(std::size_t w) const;

  // A list of pieces that increase in file offset without overlapping, or the source that makes
  // them window by window (each window's plan makes those in the window).
  struct Run {
    std::span<const Piece> pieces;
    const PieceSource* maker = nullptr;
    MPI_Offset low = 0, high = 0;  // the maker's range
  };

  int fd_;
  std::vector<Run> runs_;
  MPI_Offset low_ = 0, high_ = 0;  // the bytes the call touches
  std::size_t window_bytes_ = 0;
  std::vector<Window> windows_;
  std::byte* buffers_[2] = {nullptr, nullptr};

  Mutex mutex_;
  ConditionVariable fillable_;
  ConditionVariable writable_;
  std::size_t next_plan_ = 0;    // the next window to plan
  std::size_t fill_window_ = 0;  // whose fills are being handed out
  std::size_t next_task_ = 0;    // in fill_window_
  std::size_t ready_ = 0;        // windows [0, ready_) are filled
  std::size_t written_ = 0;      // windows [0, written_) are in the file (or skipped)
  int error_ = 0;
  std::size_t direct_windows_ = 0;  // counted by the plans, under mutex_
  bool write_here_ = false;  // the writer's pwrite calls run on its own core (other_cores_fill)
  int writer_vp_ = -1;       // its core when write_here_, once claimed: no filler runs there
  bool claimed_ = false;
};

}  // namespace weft::mpi::io
