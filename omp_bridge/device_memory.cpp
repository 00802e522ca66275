// The device memory routines (omp_target_alloc and family) for the one device weft has, the host
// (device number omp_get_initial_device()): its memory is the process heap, so they allocate and
// copy there. Another device number gets the routine's failure value (null or EINVAL), as no
// such device exists.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "omp.h"

namespace {

bool is_host(int device) {
  return device == omp_get_initial_device();
}

// Copies a `dims`-dimensional subvolume of `volume` elements of `size` bytes at `src_offsets` in
// an array of `src_dims` into one at `dst_offsets` of `dst_dims` (row-major, as C arrays).
void copy_rect(char* dst, const char* src, std::size_t size, int dims, const std::size_t* volume,
               const std::size_t* dst_offsets, const std::size_t* src_offsets,
               const std::size_t* dst_dims, const std::size_t* src_dims) {
  if (dims == 1) {
    std::memcpy(dst + dst_offsets[0] * size, src + src_offsets[0] * size, volume[0] * size);
    return;
  }
  std::size_t dst_stride = size;
  std::size_t src_stride = size;
  for (int d = 1; d < dims; ++d) {
    dst_stride *= dst_dims[d];
    src_stride *= src_dims[d];
  }
  for (std::size_t i = 0; i < volume[0]; ++i) {
    copy_rect(dst + (dst_offsets[0] + i) * dst_stride, src + (src_offsets[0] + i) * src_stride,
              size, dims - 1, volume + 1, dst_offsets + 1, src_offsets + 1, dst_dims + 1,
              src_dims + 1);
  }
}

}  // namespace

extern "C" {

void* omp_target_alloc(std::size_t size, int device) throw() {
  return is_host(device) ? std::malloc(size) : nullptr;
}

void omp_target_free(void* pointer, int device) throw() {
  if (is_host(device)) std::free(pointer);
}

int omp_target_is_present(const void*, int device) throw() {
  return is_host(device) ? 1 : 0;
}

int omp_target_memcpy(void* dst, const void* src, std::size_t length, std::size_t dst_offset,
                      std::size_t src_offset, int dst_device, int src_device) throw() {
  if (!is_host(dst_device) || !is_host(src_device)) return EINVAL;
  std::memmove(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset,
               length);
  return 0;
}

// With both pointers null, returns the number of dimensions supported (any).
int omp_target_memcpy_rect(void* dst, const void* src, std::size_t size, int dims,
                           const std::size_t* volume, const std::size_t* dst_offsets,
                           const std::size_t* src_offsets, const std::size_t* dst_dims,
                           const std::size_t* src_dims, int dst_device, int src_device) throw() {
  if (dst == nullptr && src == nullptr) return __INT_MAX__;
  if (!is_host(dst_device) || !is_host(src_device) || dims < 1) return EINVAL;
  copy_rect(static_cast<char*>(dst), static_cast<const char*>(src), size, dims, volume, dst_offsets,
            src_offsets, dst_dims, src_dims);
  return 0;
}

// Host memory is never associated with itself: there is no device memory to associate.
int omp_target_associate_ptr(const void*, const void*, std::size_t, std::size_t, int) throw() {
  return EINVAL;
}

int omp_target_disassociate_ptr(const void*, int) throw() {
  return EINVAL;
}

}  // extern "C"
