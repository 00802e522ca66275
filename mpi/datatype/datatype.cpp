// The datatype object's member functions and the copies between two layouts.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "datatype/datatype_handles.h"
#include "datatype/datatype_layout.h"
#include "util/copy_bytes.h"

using Layout = weft_mpi_datatype::Layout;

std::size_t weft_mpi_datatype::size() const {
  return layout->size;
}
MPI_Aint weft_mpi_datatype::lb() const {
  return layout->lb;
}
MPI_Aint weft_mpi_datatype::extent() const {
  return layout->extent;
}
MPI_Aint weft_mpi_datatype::true_lb() const {
  return layout->true_lb;
}
MPI_Aint weft_mpi_datatype::true_extent() const {
  return layout->true_extent;
}
bool weft_mpi_datatype::committed() const {
  return layout->predefined || layout->committed.load(std::memory_order_relaxed);
}
bool weft_mpi_datatype::predefined() const {
  return layout->predefined;
}
bool weft_mpi_datatype::contiguous() const {
  return layout->block_count <= 1 && layout->repeat == 1 &&
         static_cast<std::size_t>(layout->extent) == layout->size;
}
std::string_view weft_mpi_datatype::name() const {
  return layout->name.text;
}
const weft_mpi_datatype* weft_mpi_datatype::basic() const {
  return layout->basic;
}
std::size_t weft_mpi_datatype::basic_count() const {
  return layout->basic_count;
}

void weft_mpi_datatype::retain() {
  if (layout->predefined) return;
  // relaxed: a new reference is taken from one the caller already holds.
  layout->references.fetch_add(1, std::memory_order_relaxed);
}

void weft_mpi_datatype::release() {
  if (layout->predefined) return;
  // acq_rel: the last release must see every use made under the other references.
  if (layout->references.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  for (MPI_Datatype inner : layout->parts->contents.types) inner->release();
  delete layout->parts;
  delete layout;
  weft::mpi::recycle_handle(this);
}

namespace weft::mpi {

namespace {

// Byte arithmetic on addresses that may be absolute (MPI_BOTTOM plus MPI_Get_address values).
char* at(const void* base, MPI_Aint displacement) {
  return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(base) +
                                 static_cast<std::uintptr_t>(displacement));
}

// A position in the byte stream of `count` elements of a type: the current block's unread part.
class Cursor {
 public:
  Cursor(const void* base, const Layout& layout, std::size_t offset)
      : base_(base), layout_(layout) {
    element_ = offset / layout.size;
    const std::size_t period = layout.size / layout.repeat;
    period_ = offset % layout.size / period;
    const std::size_t within_period = offset % period;
    const std::size_t* ends = layout.block_ends;
    block_ = static_cast<std::size_t>(
        std::upper_bound(ends, ends + layout.block_count, within_period) - ends);
    within_ = within_period - (block_ == 0 ? 0 : ends[block_ - 1]);
  }

  char* data() const {
    return at(base_, static_cast<MPI_Aint>(element_) * layout_.extent +
                         static_cast<MPI_Aint>(period_) * layout_.stride +
                         layout_.blocks[block_].offset + static_cast<MPI_Aint>(within_));
  }
  std::size_t available() const { return layout_.blocks[block_].length - within_; }

  void advance(std::size_t bytes) {
    within_ += bytes;
    if (within_ < layout_.blocks[block_].length) return;
    within_ = 0;
    if (++block_ < layout_.block_count) return;
    block_ = 0;
    if (++period_ < layout_.repeat) return;
    period_ = 0;
    ++element_;
  }

 private:
  const void* base_;
  const Layout& layout_;
  std::size_t element_;
  std::size_t period_;
  std::size_t block_;
  std::size_t within_;
};

char* contiguous_data(const void* base, const Datatype& type, std::size_t offset) {
  return at(base, type.true_lb() + static_cast<MPI_Aint>(offset));
}

}  // namespace

std::size_t copy_range(const void* src, std::size_t src_count, const Datatype& src_type, void* dst,
                       std::size_t dst_count, const Datatype& dst_type, std::size_t offset,
                       std::size_t bytes) {
  const std::size_t end =
      std::min({src_count * src_type.size(), dst_count * dst_type.size(), offset + bytes});
  if (end <= offset) return 0;
  const std::size_t total = end - offset;
  const bool src_flat = src_type.contiguous();
  const bool dst_flat = dst_type.contiguous();
  if (src_flat && dst_flat) {
    copy_bytes(contiguous_data(dst, dst_type, offset), contiguous_data(src, src_type, offset),
               total);
    return total;
  }
  if (src_flat) {
    const char* from = contiguous_data(src, src_type, offset);
    Cursor to(dst, *dst_type.layout, offset);
    for (std::size_t left = total; left > 0;) {
      const std::size_t n = std::min(left, to.available());
      copy_bytes(to.data(), from, n);
      from += n;
      to.advance(n);
      left -= n;
    }
    return total;
  }
  if (dst_flat) {
    char* to = contiguous_data(dst, dst_type, offset);
    Cursor from(src, *src_type.layout, offset);
    for (std::size_t left = total; left > 0;) {
      const std::size_t n = std::min(left, from.available());
      copy_bytes(to, from.data(), n);
      to += n;
      from.advance(n);
      left -= n;
    }
    return total;
  }
  Cursor from(src, *src_type.layout, offset);
  Cursor to(dst, *dst_type.layout, offset);
  for (std::size_t left = total; left > 0;) {
    const std::size_t n = std::min({left, from.available(), to.available()});
    copy_bytes(to.data(), from.data(), n);
    from.advance(n);
    to.advance(n);
    left -= n;
  }
  return total;
}

std::size_t copy(const void* src, std::size_t src_count, const Datatype& src_type, void* dst,
                 std::size_t dst_count, const Datatype& dst_type) {
  return copy_range(src, src_count, src_type, dst, dst_count, dst_type, 0,
                    src_count * src_type.size());
}

void pack(const void* src, std::size_t count, const Datatype& type, void* out) {
  const std::size_t bytes = count * type.size();
  copy(src, count, type, out, bytes, weft_mpi_byte);
}

void unpack(const void* in, std::size_t bytes, void* dst, std::size_t count, const Datatype& type) {
  copy(in, bytes, weft_mpi_byte, dst, count, type);
}

}  // namespace weft::mpi
