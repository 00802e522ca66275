#include "io/collective_buffer.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"

namespace weft::mpi::io {
namespace {

// A hint's value as a positive byte count, or 0 when it is absent or not one.
std::size_t hint_bytes(const File& file, const std::string& key) {
  for (const auto& [k, v] : file.hints) {
    if (k != key) continue;
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    return end != v.c_str() && *end == '\0' && n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  return 0;
}

// Collective buffers are kept between calls: a fresh one would take a page fault per page of
// every call (the kernel zeroing it), about a tenth of the time of the write it buffers.
class BufferPool {
 public:
  std::byte* take(std::size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->first != bytes) continue;
        std::byte* buffer = it->second.release();
        free_.erase(it);
        return buffer;
      }
    }
    return new std::byte[bytes];
  }
  void give(std::byte* buffer, std::size_t bytes) {
    std::unique_ptr<std::byte[]> owned(buffer);
    std::lock_guard lock(mutex_);
    // Enough for two collective writes at once; a program changing cb_buffer_size ages the rest.
    if (free_.size() >= 4) free_.erase(free_.begin());
    free_.emplace_back(bytes, std::move(owned));
  }

 private:
  Mutex mutex_;
  std::vector<std::pair<std::size_t, std::unique_ptr<std::byte[]>>> free_;
};

BufferPool& pool() {
  static BufferPool instance;
  return instance;
}

// Whether the writer makes its pwrite calls on its own core rather than handing each to a spare
// kernel thread: when another core of its NUMA node runs the fillers. The kernel's copy into the
// page cache then has a core to itself while the fillers have the others, and the writer goes
// from one window's pwrite to the next without waking anyone. A spare thread instead competes
// for the cores with every filling processor (three kernel threads on two cores share them, and
// the write, the pipeline's bottleneck, runs at two thirds of its speed whenever the fillers
// run), and each window costs two kernel-thread wake-ups. A write that waits for write-back then
// holds the writer's core, as the disk's own write would; the node's other cores run the rest.
bool other_cores_fill() {
  const Scheduler* scheduler = Scheduler::current();
  const int vp = this_thread::vp();
  if (scheduler == nullptr || vp < 0) return false;
  const int node = scheduler->vp_numa(vp);
  for (int other = 0; other < scheduler->num_vps(); ++other) {
    if (other != vp && scheduler->vp_numa(other) == node) return true;
  }
  return false;
}

MPI_Offset end_of(const Piece& piece) {
  return piece.file + static_cast<MPI_Offset>(piece.length);
}

// Writes the vectors `iov[0, count)` at `at`, IOV_MAX at a time, until all are in the file:
// 0, or the errno of the failure (ENOSPC for a write that makes no progress).
int write_vectors(int fd, iovec* iov, std::size_t count, MPI_Offset at) {
  std::size_t first = 0;
  while (first < count) {
    const std::size_t n = std::min<std::size_t>(count - first, IOV_MAX);
    const ssize_t done = ::pwritev(fd, iov + first, static_cast<int>(n), at);
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) return errno;
    if (done == 0) return ENOSPC;
    at += done;
    // Skip the vectors the call wrote; shorten the one it stopped in.
    auto left = static_cast<std::size_t>(done);
    while (left > 0 && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (left > 0) {
      iov[first].iov_base = static_cast<std::byte*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return 0;
}

}  // namespace

BufferGeometry buffer_geometry(const File& file) {
  BufferGeometry g;
  g.alignment = hint_bytes(file, "striping_unit");
  if (g.alignment == 0) {
    struct stat st {};
    g.alignment = ::fstat(file.fd, &st) == 0 && st.st_blksize > 0
                      ? static_cast<std::size_t>(st.st_blksize)
                      : 4096;
  }
  std::size_t buffer = hint_bytes(file, "cb_buffer_size");
  if (buffer == 0) buffer = kDefaultBufferBytes;
  g.buffer_bytes = std::max(g.alignment, buffer / g.alignment * g.alignment);
  g.first_window_bytes =
      std::min(g.buffer_bytes, (kFirstWindowBytes + g.alignment - 1) / g.alignment * g.alignment);
  return g;
}

// One window of the file: [start, end) of the bytes the call touches, and after its plan the
// ranges its pieces cover (the holes between them are not written).
struct BufferedWrite::Window {
  MPI_Offset origin = 0;  // aligned: the file offset of the buffer's first byte
  MPI_Offset start = 0, end = 0;
  std::vector<std::pair<MPI_Offset, MPI_Offset>> covered;
  // By run, after the plan: its pieces that touch the window, in `made` for a run made by its
  // PieceSource (kept until the window is written: the fills read them).
  std::vector<std::span<const Piece>> runs;
  std::vector<std::vector<Piece>> made;
  bool planned = false;
  bool overlap = false;  // pieces of several runs overlap: one participant fills it, in order
  // Written from the pieces' memory (kDirectVectorBytes): no fills, the plan lists the vectors
  // in file order, those of covered range k being [range_vectors[k], range_vectors[k + 1]).
  bool direct = false;
  // Not while the writer writes on its own core and other cores fill (write_here_): the fills
  // then cost the writer nothing, and its pwritev of many vectors costs it more than one pwrite.
  bool may_go_direct = true;
  std::vector<iovec> vectors;
  std::vector<std::size_t> range_vectors;
  std::size_t fills_done = 0;
  bool filled = false;
};

Shape shape_of(std::span<const Piece> pieces) {
  Shape shape;
  shape.low = std::numeric_limits<MPI_Offset>::max();
  MPI_Offset previous_end = std::numeric_limits<MPI_Offset>::min();
  for (const Piece& piece : pieces) {
    if (piece.file < previous_end) shape.ordered = false;
    shape.low = std::min(shape.low, piece.file);
    previous_end = end_of(piece);
    shape.high = std::max(shape.high, previous_end);
    shape.bytes += piece.length;
  }
  return shape;
}

BufferedWrite::BufferedWrite(int fd, const std::vector<std::span<const Piece>>& sources,
                             const BufferGeometry& geometry, std::span<const Shape> shapes,
                             std::span<const PieceSource* const> makers)
    : fd_(fd), window_bytes_(geometry.buffer_bytes) {
  low_ = std::numeric_limits<MPI_Offset>::max();
  high_ = 0;
  for (std::size_t s = 0; s < sources.size(); ++s) {
    const std::span<const Piece> source = sources[s];
    const PieceSource* maker = s < makers.size() ? makers[s] : nullptr;
    if (maker != nullptr || (s < shapes.size() && shapes[s].ordered)) {
      if (shapes[s].low < shapes[s].high) {
        low_ = std::min(low_, shapes[s].low);
        high_ = std::max(high_, shapes[s].high);
        runs_.push_back({source, maker, shapes[s].low, shapes[s].high});
      }
      continue;
    }
    std::size_t begin = 0;
    for (std::size_t i = 0; i < source.size(); ++i) {
      low_ = std::min(low_, source[i].file);
      high_ = std::max(high_, end_of(source[i]));
      if (i > begin && source[i].file < end_of(source[i - 1])) {
        runs_.push_back({source.subspan(begin, i - begin)});
        begin = i;
      }
    }
    if (begin < source.size()) runs_.push_back({source.subspan(begin)});
  }
  if (low_ >= high_) return;
  const auto alignment = static_cast<MPI_Offset>(geometry.alignment);
  const auto largest = static_cast<MPI_Offset>(window_bytes_);
  MPI_Offset size = geometry.first_window_bytes > 0
                        ? std::min(largest, static_cast<MPI_Offset>(geometry.first_window_bytes))
                        : largest;
  // Each window ends at a multiple of its size (256 KiB, 512 KiB... of the file): the kernel
  // gives a buffered write page-cache folios as large as its length and alignment allow (ext4 up
  // to 2 MiB), and windows that straddle those bounds cost it smaller folios and folios written
  // in two calls (docs/mpi-io.md, "Ranges first").
  MPI_Offset origin = low_ / alignment * alignment;
  while (origin < high_) {
    const MPI_Offset end = (origin / size + 1) * size;
    Window& window = windows_.emplace_back();
    window.origin = origin;
    window.start = std::max(low_, origin);
    window.end = std::min(high_, end);
    origin = end;
    size = std::min(largest, 2 * size);
  }
  for (std::byte*& buffer : buffers_) buffer = pool().take(window_bytes_);
}

BufferedWrite::~BufferedWrite() {
  for (std::byte* buffer : buffers_) {
    if (buffer != nullptr) pool().give(buffer, window_bytes_);
  }
}

std::byte* BufferedWrite::buffer_of(std::size_t w) const {
  return buffers_[w % 2];
}

// The tasks: each window's plan (handed out up to two windows ahead of the fills), then its
// fills, one run of pieces each, once its plan is known and its buffer is free again (the write
// of the window two before it is done).
constexpr std::size_t kPlan = std::numeric_limits<std::size_t>::max();

bool BufferedWrite::take(Task& task) {
  if (next_plan_ < windows_.size() && next_plan_ < fill_window_ + 2) {
    // Read here, under the lock: the writer may claim its core after the first plans are out.
    windows_[next_plan_].may_go_direct = !write_here_;
    task = {next_plan_++, kPlan};
    return true;
  }
  while (fill_window_ < windows_.size() && fill_window_ < written_ + 2) {
    const std::size_t w = fill_window_;
    Window& window = windows_[w];
    if (!window.planned) return false;
    if (window.direct) {
      // Filled when planned: passing it may let the next plan be handed out, which nobody
      // would otherwise take (the writer waits for a window to write, the fillers for work).
      // At most two deep: fill_window_ stays below written_ + 2.
      ++fill_window_;
      return take(task);
    }
    // A window whose runs overlap is one task: every run in order, so the later one's bytes stay.
    const std::size_t tasks = window.overlap ? 1 : runs_.size();
    const std::size_t index = next_task_;
    if (++next_task_ == tasks) {
      next_task_ = 0;
      ++fill_window_;
    }
    // A run with no piece in the window is done here, not handed out: a block-distributed
    // array puts most ranks' pieces outside each window (48 of 64 ranks' at 64 ranks), and each
    // task handed out costs its filler the lock twice and a switch.
    if (window.overlap || !window.runs[index].empty()) {
      task = {w, index};
      return true;
    }
    fill_done(w);
  }
  return false;
}

void BufferedWrite::perform(const Task& task) {
  if (task.index == kPlan) {
    plan(task.window);
  } else if (windows_[task.window].overlap) {
    for (std::size_t r = 0; r < runs_.size(); ++r) fill(task.window, r);
  } else {
    fill(task.window, task.index);
  }
}

void BufferedWrite::finish(const Task& task) {
  Window& window = windows_[task.window];
  if (task.index == kPlan) {
    window.planned = true;
    if (window.direct) {
      ++direct_windows_;
      window.filled = true;
      while (ready_ < windows_.size() && windows_[ready_].filled) ++ready_;
    }
    fillable_.notify_all();
    writable_.notify_one();  // the writer helps fill while it has nothing to write
  } else {
    fill_done(task.window);
  }
}

void BufferedWrite::fill_done(std::size_t w) {
  Window& window = windows_[w];
  if (++window.fills_done < (window.overlap ? 1 : runs_.size())) return;
  window.filled = true;
  while (ready_ < windows_.size() && windows_[ready_].filled) ++ready_;
  writable_.notify_one();
}

// The fillers wait for work (a window planned, a buffer written) and the writer for a filled
// window, on conditions of their own: a rank finishing a copy wakes nobody unless it completes
// a window, which with tens of ranks matters.
//
// When the writer writes on its own core, the ranks that share that core leave at once (their
// caller waits for the writer anyway): the writer is then the only thread of its core, so it
// goes from a returned pwrite to the next window's without waiting behind the fillers queued on
// its core (each a run's copy long), and the fillers of the other cores need not yield after
// each copy for its sake. It still fills whenever it has nothing to write.
void BufferedWrite::claim_writer() {
  std::lock_guard lock(mutex_);
  if (claimed_) return;
  claimed_ = true;
  write_here_ = other_cores_fill();
  if (write_here_) {
    writer_vp_ = this_thread::vp();
    fillable_.notify_all();
  }
}

std::size_t BufferedWrite::run(bool writer) {
  if (writer) claim_writer();
  const int vp = this_thread::vp();
  std::size_t copies = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (writer && ready_ > written_) {
      const std::size_t w = written_;
      lock.unlock();
      if (error_ == 0) write(w);
      lock.lock();
      ++written_;
      fillable_.notify_all();
      continue;
    }
    if (writer ? written_ == windows_.size()
               : fill_window_ == windows_.size() || (vp >= 0 && vp == writer_vp_)) {
      return copies;
    }
    Task task{};
    const bool took = take(task);
    // The last task handed out: the waiting fillers may leave.
    if (fill_window_ == windows_.size()) fillable_.notify_all();
    if (took) {
      // Threads are not preempted: a writer whose pwrite has returned on this core must not wait
      // for all the windows to be filled to write the next one.
      const bool yield = !writer && writer_vp_ < 0;
      lock.unlock();
      perform(task);
      if (task.index != kPlan) ++copies;
      if (yield) this_thread::yield();
      lock.lock();
      finish(task);
      continue;
    }
    // take() may have completed windows by itself (runs with no piece in them).
    if (writer ? ready_ > written_ : fill_window_ == windows_.size()) continue;
    (writer ? writable_ : fillable_).wait(lock);
  }
}

// The ranges the window's pieces cover, following the chain of pieces that start where the
// previous one ended (in a regular interleaving the run that came next last time usually comes
// next again); a piece that starts before the end of the previous one is an overlap, and the
// window's ranges are then found by sorting. A window whose pieces average kDirectVectorBytes or
// more (counting the window's span, holes included, against its pieces) gets its vectors on the
// way, pieces adjacent in both the file and memory merged into one; one with an overlap is
// filled instead (the later run's bytes must win, which one pwritev per range cannot promise).
void BufferedWrite::plan(std::size_t w) {
  Window& window = windows_[w];
  const MPI_Offset start = window.start, end = window.end;
  struct Cursor {
    const Piece* at;
    const Piece* end;
  };
  // Each run's pieces in the window: made by its source, or found in its list.
  window.runs.resize(runs_.size());
  window.made.resize(runs_.size());
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    const Run& run = runs_[r];
    if (run.maker != nullptr) {
      if (run.low < end && run.high > start) run.maker->pieces_in(start, end, window.made[r]);
      window.runs[r] = window.made[r];
      continue;
    }
    const Piece* first =
        std::partition_point(run.pieces.data(), run.pieces.data() + run.pieces.size(),
                             [&](const Piece& p) { return end_of(p) <= start; });
    const Piece* last = std::partition_point(first, run.pieces.data() + run.pieces.size(),
                                             [&](const Piece& p) { return p.file < end; });
    window.runs[r] = {first, last};
  }
  std::vector<Cursor> cursors;
  for (std::span<const Piece> run : window.runs) {
    if (!run.empty()) cursors.push_back({run.data(), run.data() + run.size()});
  }
  std::size_t pieces = 0;
  for (const Cursor& c : cursors) pieces += static_cast<std::size_t>(c.end - c.at);
  const bool direct = window.may_go_direct && pieces > 0 &&
                      static_cast<std::size_t>(end - start) >= pieces * kDirectVectorBytes;
  std::vector<iovec> vectors;
  std::vector<std::size_t> range_vectors;
  if (direct) vectors.reserve(pieces);
  auto clipped_start = [&](const Cursor& c) { return std::max(c.at->file, start); };
  std::vector<std::size_t> follows(cursors.size(), 0);
  std::vector<std::pair<MPI_Offset, MPI_Offset>> covered;
  MPI_Offset at = start;
  std::size_t last = cursors.size();
  for (;;) {
    std::size_t next = cursors.size();
    if (last < cursors.size()) {
      const std::size_t guess = follows[last];
      const Cursor& c = cursors[guess];
      if (c.at != c.end && clipped_start(c) == at) next = guess;
    }
    if (next == cursors.size()) {
      MPI_Offset lowest = std::numeric_limits<MPI_Offset>::max();
      for (std::size_t i = 0; i < cursors.size(); ++i) {
        if (cursors[i].at != cursors[i].end && clipped_start(cursors[i]) < lowest) {
          lowest = clipped_start(cursors[i]);
          next = i;
        }
      }
      if (next == cursors.size()) break;
      if (!covered.empty() && lowest < at) {
        window.overlap = true;
        break;
      }
      if (covered.empty() || lowest > at) covered.emplace_back(lowest, lowest);
    }
    if (last < cursors.size()) follows[last] = next;
    Cursor& c = cursors[next];
    const MPI_Offset from = covered.back().second;
    at = std::min(end_of(*c.at), end);
    if (direct) {
      std::byte* memory = c.at->memory + (from - c.at->file);
      const auto length = static_cast<std::size_t>(at - from);
      const bool new_range = range_vectors.size() < covered.size();
      if (new_range) range_vectors.push_back(vectors.size());
      if (!new_range &&
          static_cast<std::byte*>(vectors.back().iov_base) + vectors.back().iov_len == memory) {
        vectors.back().iov_len += length;
      } else {
        vectors.push_back({memory, length});
      }
    }
    covered.back().second = at;
    ++c.at;
    last = next;
  }
  if (window.overlap) {
    covered.clear();
    for (std::span<const Piece> run : window.runs) {
      for (const Piece& p : run) {
        const MPI_Offset from = std::max(p.file, start), to = std::min(end_of(p), end);
        if (from < to) covered.emplace_back(from, to);
      }
    }
    std::sort(covered.begin(), covered.end());
    std::size_t kept = 0;
    for (const auto& range : covered) {
      if (kept > 0 && range.first <= covered[kept - 1].second) {
        covered[kept - 1].second = std::max(covered[kept - 1].second, range.second);
      } else {
        covered[kept++] = range;
      }
    }
    covered.resize(kept);
  } else if (direct) {
    range_vectors.push_back(vectors.size());
    window.direct = true;
    window.vectors = std::move(vectors);
    window.range_vectors = std::move(range_vectors);
  }
  window.covered = std::move(covered);
}

void BufferedWrite::fill(std::size_t w, std::size_t r) {
  const Window& window = windows_[w];
  const MPI_Offset origin = window.origin;
  std::byte* buffer = buffer_of(w);
  // The run's pieces that touch the window (the plan found them); the first and last may cross
  // its edges.
  for (const Piece* p = window.runs[r].data(); p != window.runs[r].data() + window.runs[r].size();
       ++p) {
    const MPI_Offset from = std::max(p->file, window.start);
    const MPI_Offset to = std::min(end_of(*p), window.end);
    std::memcpy(buffer + (from - origin), p->memory + (from - p->file),
                static_cast<std::size_t>(to - from));
  }
}

int BufferedWrite::write_buffer(std::size_t w) const {
  const MPI_Offset origin = windows_[w].origin;
  const std::byte* buffer = buffer_of(w);
  for (auto [from, to] : windows_[w].covered) {
    while (from < to) {
      const ssize_t n =
          ::pwrite(fd_, buffer + (from - origin), static_cast<std::size_t>(to - from), from);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      if (n == 0) return ENOSPC;
      from += n;
    }
  }
  return 0;
}

int BufferedWrite::write_direct(Window& window) {
  for (std::size_t k = 0; k < window.covered.size(); ++k) {
    const std::size_t first = window.range_vectors[k];
    const int error = write_vectors(fd_, window.vectors.data() + first,
                                    window.range_vectors[k + 1] - first, window.covered[k].first);
    if (error != 0) return error;
  }
  return 0;
}

void BufferedWrite::write(std::size_t w) {
  Window& window = windows_[w];
  auto write_ranges = [&] { return window.direct ? write_direct(window) : write_buffer(w); };
  int error = 0;
  if (write_here_ || static_cast<std::size_t>(window.end - window.start) < kDirectWriteBytes) {
    error = write_ranges();
  } else {
    error = weft::io::blocking_call(write_ranges);
  }
  if (error != 0) error_ = error;
  // The vectors and pieces of a large call would otherwise stay until its end.
  std::vector<iovec>().swap(window.vectors);
  std::vector<std::span<const Piece>>().swap(window.runs);
  std::vector<std::vector<Piece>>().swap(window.made);
}

}  // namespace weft::mpi::io
