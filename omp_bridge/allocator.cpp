// OpenMP's memory management API and GCC's GOMP_alloc/GOMP_free (the allocate clause). Every
// memory space is the process heap. A block carries a header before it (the start of its
// allocation and its size), so that omp_free and omp_realloc need no size or allocator.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "gomp_abi.h"
#include "omp.h"

namespace weft::omp {
namespace {

struct Header {
  void* allocation;
  std::size_t size;
};

// An allocator from omp_init_allocator: what weft honours of its traits.
struct Allocator {
  std::size_t alignment = alignof(std::max_align_t);
};

constexpr std::uintptr_t kLastPredefined = omp_thread_mem_alloc;

omp_allocator_handle_t default_allocator = omp_default_mem_alloc;

std::size_t alignment_of(omp_allocator_handle_t allocator) {
  if (allocator == omp_null_allocator) allocator = default_allocator;
  const auto handle = static_cast<std::uintptr_t>(allocator);
  if (handle > kLastPredefined) return reinterpret_cast<const Allocator*>(handle)->alignment;
  return alignof(std::max_align_t);
}

void* allocate(std::size_t alignment, std::size_t size, omp_allocator_handle_t allocator) {
  alignment = std::max({alignment, alignment_of(allocator), alignof(Header)});
  // OpenMP requires a power of two; anything else gets no memory.
  if ((alignment & (alignment - 1)) != 0 || size > SIZE_MAX / 2) return nullptr;
  void* allocation = std::malloc(size + alignment + sizeof(Header));
  if (allocation == nullptr) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(allocation) + sizeof(Header);
  auto* block = reinterpret_cast<void*>((start + alignment - 1) & ~(alignment - 1));
  static_cast<Header*>(block)[-1] = {allocation, size};
  return block;
}

void release(void* block) {
  if (block != nullptr) std::free(static_cast<Header*>(block)[-1].allocation);
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

omp_allocator_handle_t omp_init_allocator(omp_memspace_handle_t, int count,
                                          const omp_alloctrait_t traits[]) throw() {
  Allocator made;
  for (int i = 0; i < count; ++i) {
    const omp_alloctrait_t& trait = traits[i];
    switch (trait.key) {
      case omp_atk_alignment:
        if ((trait.value & (trait.value - 1)) != 0) return omp_null_allocator;
        made.alignment = std::max<std::size_t>(made.alignment, trait.value);
        break;
      case omp_atk_sync_hint:
      case omp_atk_access:
        break;  // hints about use: the heap serves any
      case omp_atk_fallback:
        if (trait.value != omp_atv_default && trait.value != omp_atv_default_mem_fb) {
          return omp_null_allocator;
        }
        break;
      case omp_atk_pinned:
        if (trait.value != omp_atv_default && trait.value != omp_atv_false) {
          return omp_null_allocator;
        }
        break;
      default:
        if (trait.value != omp_atv_default) return omp_null_allocator;
    }
  }
  return static_cast<omp_allocator_handle_t>(reinterpret_cast<std::uintptr_t>(new Allocator(made)));
}

void omp_destroy_allocator(omp_allocator_handle_t allocator) throw() {
  const auto handle = static_cast<std::uintptr_t>(allocator);
  if (handle > kLastPredefined) delete reinterpret_cast<Allocator*>(handle);
}

// One default allocator per process rather than per task: a program that sets it sets it for
// all its threads.
void omp_set_default_allocator(omp_allocator_handle_t allocator) throw() {
  default_allocator = allocator;
}
omp_allocator_handle_t omp_get_default_allocator() throw() {
  return default_allocator;
}

void* omp_alloc(std::size_t size, omp_allocator_handle_t allocator) throw() {
  return allocate(1, size, allocator);
}
void* omp_aligned_alloc(std::size_t alignment, std::size_t size,
                        omp_allocator_handle_t allocator) throw() {
  return allocate(alignment, size, allocator);
}
void* omp_calloc(std::size_t count, std::size_t size, omp_allocator_handle_t allocator) throw() {
  return omp_aligned_calloc(1, count, size, allocator);
}
void* omp_aligned_calloc(std::size_t alignment, std::size_t count, std::size_t size,
                         omp_allocator_handle_t allocator) throw() {
  if (size != 0 && count > SIZE_MAX / size) return nullptr;
  void* block = allocate(alignment, count * size, allocator);
  if (block != nullptr) std::memset(block, 0, count * size);
  return block;
}
void* omp_realloc(void* block, std::size_t size, omp_allocator_handle_t allocator,
                  omp_allocator_handle_t) throw() {
  if (block == nullptr) return omp_alloc(size, allocator);
  if (size == 0) {
    release(block);
    return nullptr;
  }
  void* moved = allocate(1, size, allocator);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, block, std::min(size, static_cast<Header*>(block)[-1].size));
  release(block);
  return moved;
}
void omp_free(void* block, omp_allocator_handle_t) throw() {
  release(block);
}

void* GOMP_alloc(std::size_t alignment, std::size_t size, std::uintptr_t allocator) {
  return allocate(alignment, size, static_cast<omp_allocator_handle_t>(allocator));
}
void GOMP_free(void* block, std::uintptr_t) {
  release(block);
}

}  // extern "C"
