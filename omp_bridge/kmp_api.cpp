// The rest of LLVM's ABI: threadprivate without TLS (__kmpc_threadprivate_cached), the allocate
// clause and depobj storage (__kmpc_alloc and family, on omp_alloc), libomp's kmp_* memory API,
// and the offload entry points clang may emit, which end the program naming the feature.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kmp_thread.h"
#include "omp.h"
#include "weft/error.h"

namespace weft::omp {

using namespace kmp;
using weft::fatal;

namespace {

using Ctor = void* (*)(void*);
using CopyCtor = void* (*)(void*, void*);
using Dtor = void (*)(void*);

// A threadprivate variable: its constructors when the program registered them, else the bytes
// its original held at the first lookup, which every thread's copy starts from (as libomp does).
struct Common {
  Ctor ctor = nullptr;
  CopyCtor cctor = nullptr;
  Dtor dtor = nullptr;
  std::unique_ptr<std::byte[]> initial;
};

struct Commons {
  std::mutex lock;
  std::unordered_map<void*, Common> by_address;
};

Commons& commons() {
  static Commons instance;
  return instance;
}

// The calling thread's copy of the threadprivate variable whose original is `data`.
void* threadprivate(void* data, std::size_t size) {
  ThreadState& state = self();
  // The initial thread uses the original (the program's own variable).
  if (state.initial_team != nullptr && state.league_num == 0) return data;
  KmpThread& kmp = kmp_thread(state);
  if (auto found = kmp.threadprivate.find(data); found != kmp.threadprivate.end()) {
    return found->second.bytes.get();
  }
  ThreadPrivateCopy copy;
  copy.bytes = std::make_unique<std::byte[]>(std::max<std::size_t>(1, size));
  Commons& all = commons();
  std::lock_guard<std::mutex> lock(all.lock);
  Common& common = all.by_address[data];
  if (common.cctor != nullptr) {
    common.cctor(copy.bytes.get(), data);
  } else if (common.ctor != nullptr) {
    common.ctor(copy.bytes.get());
  } else {
    if (!common.initial) {
      common.initial = std::make_unique<std::byte[]>(std::max<std::size_t>(1, size));
      std::memcpy(common.initial.get(), data, size);
    }
    std::memcpy(copy.bytes.get(), common.initial.get(), size);
  }
  copy.destructor = common.dtor;
  void* result = copy.bytes.get();
  kmp.threadprivate.emplace(data, std::move(copy));
  return result;
}

[[noreturn]] void offload(const char* entry) {
  weft::fatal(std::string(entry) +
              ": target offload is not supported by weft's OpenMP runtime (omp_bridge); the host "
              "is its only device. See docs/omp_bridge.md");
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;
using namespace weft::omp::kmp;

extern "C" {

void* __kmpc_threadprivate_cached(ident_t* /*loc*/, kmp_int32 /*gtid*/, void* data,
                                  std::size_t size, void*** /*cache*/) {
  return threadprivate(data, size);
}
void* __kmpc_threadprivate(ident_t* /*loc*/, kmp_int32 /*gtid*/, void* data, std::size_t size) {
  return threadprivate(data, size);
}
void __kmpc_threadprivate_register(ident_t* /*loc*/, void* data, Ctor ctor, CopyCtor cctor,
                                   Dtor dtor) {
  Commons& all = commons();
  std::lock_guard<std::mutex> lock(all.lock);
  Common& common = all.by_address[data];
  common.ctor = ctor;
  common.cctor = cctor;
  common.dtor = dtor;
}

void* __kmpc_alloc(int /*gtid*/, std::size_t size, omp_allocator_handle_t allocator) {
  return omp_alloc(size, allocator);
}
void* __kmpc_aligned_alloc(int /*gtid*/, std::size_t align, std::size_t size,
                           omp_allocator_handle_t allocator) {
  return omp_aligned_alloc(align, size, allocator);
}
void* __kmpc_calloc(int /*gtid*/, std::size_t nmemb, std::size_t size,
                    omp_allocator_handle_t allocator) {
  return omp_calloc(nmemb, size, allocator);
}
void* __kmpc_realloc(int /*gtid*/, void* ptr, std::size_t size, omp_allocator_handle_t allocator,
                     omp_allocator_handle_t free_allocator) {
  return omp_realloc(ptr, size, allocator, free_allocator);
}
void __kmpc_free(int /*gtid*/, void* ptr, omp_allocator_handle_t allocator) {
  omp_free(ptr, allocator);
}
omp_allocator_handle_t __kmpc_init_allocator(int /*gtid*/, omp_memspace_handle_t memspace,
                                             int ntraits, omp_alloctrait_t traits[]) {
  return omp_init_allocator(memspace, ntraits, traits);
}
void __kmpc_destroy_allocator(int /*gtid*/, omp_allocator_handle_t allocator) {
  omp_destroy_allocator(allocator);
}
void __kmpc_set_default_allocator(int /*gtid*/, omp_allocator_handle_t allocator) {
  omp_set_default_allocator(allocator);
}
omp_allocator_handle_t __kmpc_get_default_allocator(int /*gtid*/) {
  return omp_get_default_allocator();
}

// libomp's memory API (kmp_malloc...): the process heap.
void* kmp_malloc(std::size_t size) throw() {
  return std::malloc(size);
}
void* kmp_aligned_malloc(std::size_t size, std::size_t alignment) throw() {
  void* block = nullptr;
  return posix_memalign(&block, std::max(alignment, sizeof(void*)), size) == 0 ? block : nullptr;
}
void* kmp_calloc(std::size_t nelem, std::size_t elsize) throw() {
  return std::calloc(nelem, elsize);
}
void* kmp_realloc(void* block, std::size_t size) throw() {
  return std::realloc(block, size);
}
void kmp_free(void* block) throw() {
  std::free(block);
}

// libomptarget's entry points for target regions and data clauses (clang emits them when it
// offloads). Arguments are left out: these functions read none, and on x86-64 a callee that
// ignores its register arguments is called correctly whatever they are.
int __tgt_target_mapper() {
  offload("__tgt_target_mapper");
}
int __tgt_target_nowait_mapper() {
  offload("__tgt_target_nowait_mapper");
}
int __tgt_target_teams_mapper() {
  offload("__tgt_target_teams_mapper");
}
int __tgt_target_teams_nowait_mapper() {
  offload("__tgt_target_teams_nowait_mapper");
}
void __tgt_target_data_begin_mapper() {
  offload("__tgt_target_data_begin_mapper");
}
void __tgt_target_data_begin_nowait_mapper() {
  offload("__tgt_target_data_begin_nowait_mapper");
}
void __tgt_target_data_end_mapper() {
  offload("__tgt_target_data_end_mapper");
}
void __tgt_target_data_end_nowait_mapper() {
  offload("__tgt_target_data_end_nowait_mapper");
}
void __tgt_target_data_update_mapper() {
  offload("__tgt_target_data_update_mapper");
}
void __tgt_target_data_update_nowait_mapper() {
  offload("__tgt_target_data_update_nowait_mapper");
}
void __tgt_register_lib() {
  offload("__tgt_register_lib");
}

}  // extern "C"
