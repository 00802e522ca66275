// Parallel regions: how big a team is, and how the encountering thread becomes its master,
// starts its hot workers, runs thread 0 and joins them.
#pragma once

#include <functional>

#include "thread_state.h"

namespace weft::omp {

struct TaskGroup;
class WorkShare;

// The size of a team for a region asking for `requested` threads (0: nthreads-var), as OpenMP's
// rules give it from the caller's ICVs and active nesting.
int team_size(ThreadState& self, unsigned requested);

// Of a team of `size` threads, the most the caller's contention group still allows under
// thread-limit-var (at least 1, the caller), counted in the group until release_threads.
int reserve_threads(ThreadState& self, int size);
void release_threads(ThreadState& self, int size);

// Runs fn(data) on a new team, as GOMP_parallel does; `flags` carries the proc_bind clause.
// `first_loop`, when given, prepares the team's first worksharing construct before the threads
// start (combined parallel loops and sections, whose threads only call the *_next functions).
// `implicit_group`, when given, is the taskgroup of every implicit task (task reductions).
// `reserved`: the caller reserved `requested` threads (reserve_threads) and releases them.
void run_parallel(void (*fn)(void*), void* data, unsigned requested, unsigned flags,
                  const std::function<void(ThreadState&, WorkShare&)>& first_loop = {},
                  TaskGroup* implicit_group = nullptr, bool reserved = false);

}  // namespace weft::omp
