// OpenMP's memory management API and GCC's GOMP_alloc/GOMP_free (the allocate clause). Every
// memory space is the process heap; an allocator's pool_size bounds what it hands out at once. A
// block carries a header before it (the start of its allocation and its size), so that omp_free and
// omp_realloc need no size or allocator.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "gomp_abi.h"
#include "omp.h"
#include "weft/error.h"

namespace weft::omp {
namespace {

struct Allocator;

struct Header {
  void* allocation;
  std::size_t size;
  Allocator* pool;  // the allocator whose pool_size the block counts against, or null
};

// An allocator from omp_init_allocator: what weft honours of its traits. With a pool_size, the
// blocks it hands out at once may not exceed it; past it, its fallback answers: null_fb a null
// pointer, abort_fb the end of the program, default_mem_fb (the default) the default allocator,
// allocator_fb the fb_data allocator.
struct Allocator {
  std::size_t alignment = alignof(std::max_align_t);
  std::size_t pool_size = 0;  // 0: no limit
  std::atomic<std::size_t> used{0};
  std::uintptr_t fallback = omp_atv_default_mem_fb;
  omp_allocator_handle_t fallback_allocator = omp_default_mem_alloc;
};

constexpr std::uintptr_t kLastPredefined = omp_thread_mem_alloc;

// def-allocator-var's initial value: OMP_ALLOCATOR's predefined allocator, or the allocator of a
// predefined memory space with default traits (which is that space's predefined allocator), else
// the default one. OpenMP 5.1 (6.22) sets omp_default_mem_alloc when the allocator asked for
// cannot be created and gives no behaviour for a value outside its grammar; weft warns and uses
// the default, as libgomp and libomp do (weft takes no traits after a memory space).
omp_allocator_handle_t initial_allocator() {
  const char* text = std::getenv("OMP_ALLOCATOR");
  if (text == nullptr) return omp_default_mem_alloc;
  static constexpr std::pair<std::string_view, omp_allocator_handle_t> kNames[] = {
      {"omp_default_mem_alloc", omp_default_mem_alloc},
      {"omp_large_cap_mem_alloc", omp_large_cap_mem_alloc},
      {"omp_const_mem_alloc", omp_const_mem_alloc},
      {"omp_high_bw_mem_alloc", omp_high_bw_mem_alloc},
      {"omp_low_lat_mem_alloc", omp_low_lat_mem_alloc},
      {"omp_cgroup_mem_alloc", omp_cgroup_mem_alloc},
      {"omp_pteam_mem_alloc", omp_pteam_mem_alloc},
      {"omp_thread_mem_alloc", omp_thread_mem_alloc},
      {"omp_default_mem_space", omp_default_mem_alloc},
      {"omp_large_cap_mem_space", omp_large_cap_mem_alloc},
      {"omp_const_mem_space", omp_const_mem_alloc},
      {"omp_high_bw_mem_space", omp_high_bw_mem_alloc},
      {"omp_low_lat_mem_space", omp_low_lat_mem_alloc}};
  std::string value(text);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
  value.erase(0, value.find_first_not_of(" \t\n"));
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& [name, handle] : kNames) {
    if (name == value) return handle;
  }
  std::fprintf(stderr,
               "weft: warning: OMP_ALLOCATOR=\"%s\": not a predefined allocator or memory space; "
               "using omp_default_mem_alloc\n",
               text);
  return omp_default_mem_alloc;
}

omp_allocator_handle_t default_allocator = initial_allocator();

std::size_t alignment_of(omp_allocator_handle_t allocator) {
  if (allocator == omp_null_allocator) allocator = default_allocator;
  const auto handle = static_cast<std::uintptr_t>(allocator);
  if (handle > kLastPredefined) return reinterpret_cast<const Allocator*>(handle)->alignment;
  return alignof(std::max_align_t);
}

Allocator* made_allocator(omp_allocator_handle_t allocator) {
  const auto handle = static_cast<std::uintptr_t>(allocator);
  return handle > kLastPredefined ? reinterpret_cast<Allocator*>(handle) : nullptr;
}

void* allocate(std::size_t alignment, std::size_t size, omp_allocator_handle_t allocator) {
  if (allocator == omp_null_allocator) allocator = default_allocator;
  alignment = std::max({alignment, alignment_of(allocator), alignof(Header)});
  // OpenMP requires a power of two; anything else gets no memory. Nor does a size of 0.
  if ((alignment & (alignment - 1)) != 0 || size == 0 || size > SIZE_MAX / 2) return nullptr;
  Allocator* pool = made_allocator(allocator);
  if (pool != nullptr && pool->pool_size != 0) {
    // relaxed: the count only bounds the pool; the blocks' memory is the heap's.
    if (pool->used.fetch_add(size, std::memory_order_relaxed) + size > pool->pool_size) {
      pool->used.fetch_sub(size, std::memory_order_relaxed);
      switch (pool->fallback) {
        case omp_atv_null_fb:
          return nullptr;
        case omp_atv_abort_fb:
          weft::fatal(
              "omp_alloc: an allocator's pool_size is exhausted and its fallback is abort_fb");
        case omp_atv_allocator_fb:
          return allocate(alignment, size, pool->fallback_allocator);
        default:
          return allocate(alignment, size, omp_default_mem_alloc);
      }
    }
  } else {
    pool = nullptr;
  }
  void* allocation = std::malloc(size + alignment + sizeof(Header));
  if (allocation == nullptr) {
    if (pool != nullptr) pool->used.fetch_sub(size, std::memory_order_relaxed);
    return nullptr;
  }
  const auto start = reinterpret_cast<std::uintptr_t>(allocation) + sizeof(Header);
  auto* block = reinterpret_cast<void*>((start + alignment - 1) & ~(alignment - 1));
  static_cast<Header*>(block)[-1] = {allocation, size, pool};
  return block;
}

void release(void* block) {
  if (block == nullptr) return;
  const Header& header = static_cast<Header*>(block)[-1];
  if (header.pool != nullptr) header.pool->used.fetch_sub(header.size, std::memory_order_relaxed);
  std::free(header.allocation);
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;

extern "C" {

omp_allocator_handle_t omp_init_allocator(omp_memspace_handle_t, int count,
                                          const omp_alloctrait_t traits[]) throw() {
  auto made_ptr = std::make_unique<Allocator>();
  Allocator& made = *made_ptr;
  for (int i = 0; i < count; ++i) {
    const omp_alloctrait_t& trait = traits[i];
    switch (trait.key) {
      case omp_atk_alignment:
        if ((trait.value & (trait.value - 1)) != 0) return omp_null_allocator;
        made.alignment = std::max<std::size_t>(made.alignment, trait.value);
        break;
      case omp_atk_sync_hint:
      case omp_atk_access:
      case omp_atk_partition:
        break;  // hints about use and placement: the heap serves any
      case omp_atk_fallback:
        if (trait.value != omp_atv_default_mem_fb && trait.value != omp_atv_null_fb &&
            trait.value != omp_atv_abort_fb && trait.value != omp_atv_allocator_fb) {
          return omp_null_allocator;
        }
        made.fallback = trait.value;
        break;
      case omp_atk_fb_data:
        made.fallback_allocator = static_cast<omp_allocator_handle_t>(trait.value);
        break;
      case omp_atk_pool_size:
        made.pool_size = trait.value;
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
  return static_cast<omp_allocator_handle_t>(reinterpret_cast<std::uintptr_t>(made_ptr.release()));
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
  // omp_realloc frees the old block as it makes the new one: when both count in one pool, the old
  // block's bytes leave it first (a pool of 4096 bytes takes 3071 reallocated to 3072), and come
  // back if the new block cannot be had, the old one then being left as it was.
  Header& old = static_cast<Header*>(block)[-1];
  Allocator* pool = old.pool;
  if (pool != nullptr &&
      pool != made_allocator(allocator == omp_null_allocator ? default_allocator : allocator)) {
    pool = nullptr;
  }
  if (pool != nullptr) {
    // relaxed: as in allocate.
    pool->used.fetch_sub(old.size, std::memory_order_relaxed);
    old.pool = nullptr;
  }
  void* moved = allocate(1, size, allocator);
  if (moved == nullptr) {
    if (pool != nullptr) {
      pool->used.fetch_add(old.size, std::memory_order_relaxed);
      old.pool = pool;
    }
    return nullptr;
  }
  std::memcpy(moved, block, std::min(size, old.size));
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
