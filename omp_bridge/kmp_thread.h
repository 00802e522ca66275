// What LLVM's ABI leaves with a thread between two of its calls: clauses pushed before a fork
// (__kmpc_push_num_threads...), the serialized regions it is in, the method of the reduction it
// is in, its doacross nest, its threadprivate copies. Made at a thread's first such call and kept
// in its ThreadState.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kmp_abi.h"
#include "task.h"
#include "team.h"
#include "thread_state.h"

namespace weft::omp {

class WorkShare;

// A parallel region of one thread that the compiler runs itself (if(0), or a nested region past
// max-active-levels): __kmpc_serialized_parallel makes its team, __kmpc_end_serialized_parallel
// ends it.
struct SerialRegion {
  explicit SerialRegion(ThreadState& self);
  TeamContext saved;
  Team team;
  Task implicit;
};

enum class ReduceMethod { none, alone, critical, atomic, tree };

// A threadprivate variable's copy in one thread (__kmpc_threadprivate_cached).
struct ThreadPrivateCopy {
  std::unique_ptr<std::byte[]> bytes;
  void (*destructor)(void*) = nullptr;
};

struct KmpThread {
  ~KmpThread();

  int num_threads = 0;     // __kmpc_push_num_threads, for the next region only; 0: none
  unsigned proc_bind = 0;  // __kmpc_push_proc_bind as GOMP_parallel's flags; 0: none
  int num_teams = 0;       // __kmpc_push_num_teams
  int teams_thread_limit = 0;
  std::vector<std::unique_ptr<SerialRegion>> serialized;

  // The reduction the thread is in (__kmpc_reduce* to __kmpc_end_reduce*).
  ReduceMethod reduce = ReduceMethod::none;
  kmp::kmp_critical_name* reduce_lock = nullptr;
  WorkShare* reduce_ws = nullptr;

  // The doacross nest the thread is in (__kmpc_doacross_init to _fini): its construct and each
  // loop's lower bound and step.
  WorkShare* doacross = nullptr;
  std::vector<kmp::kmp_dim> doacross_dims;

  std::unordered_map<void*, ThreadPrivateCopy> threadprivate;
};

// The caller's KmpThread, made at its first need.
KmpThread& kmp_thread(ThreadState& self);

// A critical section or reduction lock of LLVM's ABI: the first word of the compiler's
// kmp_critical_name, a lock word (lock_word.h).
void lock_critical(kmp::kmp_critical_name* name);
void unlock_critical(kmp::kmp_critical_name* name);

}  // namespace weft::omp
