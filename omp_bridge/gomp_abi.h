// The GOMP entry points GCC 12 emits for OpenMP on the host (its libgomp_g.h), as weft provides
// them. Declared here so that every definition is checked against one signature.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// Parallel regions and barriers.
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
void GOMP_barrier();
bool GOMP_barrier_cancel();
bool GOMP_cancel(int which, bool do_cancel);
bool GOMP_cancellation_point(int which);

// The teams construct on the host.
void GOMP_teams_reg(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit,
                    unsigned flags);

// Mutual exclusion.
void GOMP_critical_start();
void GOMP_critical_end();
void GOMP_critical_name_start(void** lock);
void GOMP_critical_name_end(void** lock);
void GOMP_atomic_start();
void GOMP_atomic_end();

// Worksharing loops over long.
bool GOMP_loop_static_start(long start, long end, long incr, long chunk, long* istart, long* iend);
bool GOMP_loop_dynamic_start(long start, long end, long incr, long chunk, long* istart, long* iend);
bool GOMP_loop_guided_start(long start, long end, long incr, long chunk, long* istart, long* iend);
bool GOMP_loop_runtime_start(long start, long end, long incr, long* istart, long* iend);
bool GOMP_loop_nonmonotonic_dynamic_start(long start, long end, long incr, long chunk, long* istart,
                                          long* iend);
bool GOMP_loop_nonmonotonic_guided_start(long start, long end, long incr, long chunk, long* istart,
                                         long* iend);
bool GOMP_loop_nonmonotonic_runtime_start(long start, long end, long incr, long* istart,
                                          long* iend);
bool GOMP_loop_maybe_nonmonotonic_runtime_start(long start, long end, long incr, long* istart,
                                                long* iend);
bool GOMP_loop_ordered_static_start(long start, long end, long incr, long chunk, long* istart,
                                    long* iend);
bool GOMP_loop_ordered_dynamic_start(long start, long end, long incr, long chunk, long* istart,
                                     long* iend);
bool GOMP_loop_ordered_guided_start(long start, long end, long incr, long chunk, long* istart,
                                    long* iend);
bool GOMP_loop_ordered_runtime_start(long start, long end, long incr, long* istart, long* iend);
bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long* istart,
                     long* iend, uintptr_t* reductions, void** mem);
bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk, long* istart,
                             long* iend, uintptr_t* reductions, void** mem);
bool GOMP_loop_static_next(long* istart, long* iend);
bool GOMP_loop_dynamic_next(long* istart, long* iend);
bool GOMP_loop_guided_next(long* istart, long* iend);
bool GOMP_loop_runtime_next(long* istart, long* iend);
bool GOMP_loop_nonmonotonic_dynamic_next(long* istart, long* iend);
bool GOMP_loop_nonmonotonic_guided_next(long* istart, long* iend);
bool GOMP_loop_nonmonotonic_runtime_next(long* istart, long* iend);
bool GOMP_loop_maybe_nonmonotonic_runtime_next(long* istart, long* iend);
bool GOMP_loop_ordered_static_next(long* istart, long* iend);
bool GOMP_loop_ordered_dynamic_next(long* istart, long* iend);
bool GOMP_loop_ordered_guided_next(long* istart, long* iend);
bool GOMP_loop_ordered_runtime_next(long* istart, long* iend);
void GOMP_loop_end();
void GOMP_loop_end_nowait();
bool GOMP_loop_end_cancel();
void GOMP_parallel_loop_static(void (*fn)(void*), void* data, unsigned num_threads, long start,
                               long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_dynamic(void (*fn)(void*), void* data, unsigned num_threads, long start,
                                long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_guided(void (*fn)(void*), void* data, unsigned num_threads, long start,
                               long end, long incr, long chunk, unsigned flags);
void GOMP_parallel_loop_runtime(void (*fn)(void*), void* data, unsigned num_threads, long start,
                                long end, long incr, unsigned flags);
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void*), void* data, unsigned num_threads,
                                             long start, long end, long incr, long chunk,
                                             unsigned flags);
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void*), void* data, unsigned num_threads,
                                            long start, long end, long incr, long chunk,
                                            unsigned flags);
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned num_threads,
                                             long start, long end, long incr, unsigned flags);
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void*), void* data,
                                                   unsigned num_threads, long start, long end,
                                                   long incr, unsigned flags);

// Worksharing loops over unsigned long long.
using ull = unsigned long long;
bool GOMP_loop_ull_static_start(bool up, ull start, ull end, ull incr, ull chunk, ull* istart,
                                ull* iend);
bool GOMP_loop_ull_dynamic_start(bool up, ull start, ull end, ull incr, ull chunk, ull* istart,
                                 ull* iend);
bool GOMP_loop_ull_guided_start(bool up, ull start, ull end, ull incr, ull chunk, ull* istart,
                                ull* iend);
bool GOMP_loop_ull_runtime_start(bool up, ull start, ull end, ull incr, ull* istart, ull* iend);
bool GOMP_loop_ull_nonmonotonic_dynamic_start(bool up, ull start, ull end, ull incr, ull chunk,
                                              ull* istart, ull* iend);
bool GOMP_loop_ull_nonmonotonic_guided_start(bool up, ull start, ull end, ull incr, ull chunk,
                                             ull* istart, ull* iend);
bool GOMP_loop_ull_nonmonotonic_runtime_start(bool up, ull start, ull end, ull incr, ull* istart,
                                              ull* iend);
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_start(bool up, ull start, ull end, ull incr,
                                                    ull* istart, ull* iend);
bool GOMP_loop_ull_ordered_static_start(bool up, ull start, ull end, ull incr, ull chunk,
                                        ull* istart, ull* iend);
bool GOMP_loop_ull_ordered_dynamic_start(bool up, ull start, ull end, ull incr, ull chunk,
                                         ull* istart, ull* iend);
bool GOMP_loop_ull_ordered_guided_start(bool up, ull start, ull end, ull incr, ull chunk,
                                        ull* istart, ull* iend);
bool GOMP_loop_ull_ordered_runtime_start(bool up, ull start, ull end, ull incr, ull* istart,
                                         ull* iend);
bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull* istart,
                         ull* iend, uintptr_t* reductions, void** mem);
bool GOMP_loop_ull_ordered_start(bool up, ull start, ull end, ull incr, long sched, ull chunk,
                                 ull* istart, ull* iend, uintptr_t* reductions, void** mem);
bool GOMP_loop_ull_static_next(ull* istart, ull* iend);
bool GOMP_loop_ull_dynamic_next(ull* istart, ull* iend);
bool GOMP_loop_ull_guided_next(ull* istart, ull* iend);
bool GOMP_loop_ull_runtime_next(ull* istart, ull* iend);
bool GOMP_loop_ull_nonmonotonic_dynamic_next(ull* istart, ull* iend);
bool GOMP_loop_ull_nonmonotonic_guided_next(ull* istart, ull* iend);
bool GOMP_loop_ull_nonmonotonic_runtime_next(ull* istart, ull* iend);
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_next(ull* istart, ull* iend);
bool GOMP_loop_ull_ordered_static_next(ull* istart, ull* iend);
bool GOMP_loop_ull_ordered_dynamic_next(ull* istart, ull* iend);
bool GOMP_loop_ull_ordered_guided_next(ull* istart, ull* iend);
bool GOMP_loop_ull_ordered_runtime_next(ull* istart, ull* iend);

// Doacross loops.
bool GOMP_loop_doacross_static_start(unsigned dims, long* counts, long chunk, long* istart,
                                     long* iend);
bool GOMP_loop_doacross_dynamic_start(unsigned dims, long* counts, long chunk, long* istart,
                                      long* iend);
bool GOMP_loop_doacross_guided_start(unsigned dims, long* counts, long chunk, long* istart,
                                     long* iend);
bool GOMP_loop_doacross_runtime_start(unsigned dims, long* counts, long* istart, long* iend);
bool GOMP_loop_doacross_start(unsigned dims, long* counts, long sched, long chunk, long* istart,
                              long* iend, uintptr_t* reductions, void** mem);
bool GOMP_loop_ull_doacross_static_start(unsigned dims, ull* counts, ull chunk, ull* istart,
                                         ull* iend);
bool GOMP_loop_ull_doacross_dynamic_start(unsigned dims, ull* counts, ull chunk, ull* istart,
                                          ull* iend);
bool GOMP_loop_ull_doacross_guided_start(unsigned dims, ull* counts, ull chunk, ull* istart,
                                         ull* iend);
bool GOMP_loop_ull_doacross_runtime_start(unsigned dims, ull* counts, ull* istart, ull* iend);
bool GOMP_loop_ull_doacross_start(unsigned dims, ull* counts, long sched, ull chunk, ull* istart,
                                  ull* iend, uintptr_t* reductions, void** mem);
void GOMP_doacross_post(long* indices);
void GOMP_doacross_ull_post(ull* indices);
void GOMP_doacross_wait(long first, ...);
void GOMP_doacross_ull_wait(ull first, ...);

// Ordered regions.
void GOMP_ordered_start();
void GOMP_ordered_end();

// Sections and single.
unsigned GOMP_sections_start(unsigned count);
unsigned GOMP_sections2_start(unsigned count, uintptr_t* reductions, void** mem);
unsigned GOMP_sections_next();
void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned num_threads, unsigned count,
                            unsigned flags);
void GOMP_sections_end();
void GOMP_sections_end_nowait();
bool GOMP_sections_end_cancel();
bool GOMP_single_start();
void* GOMP_single_copy_start();
void GOMP_single_copy_end(void* data);

// Tasks.
void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
               long arg_align, bool if_clause, unsigned flags, void** depend, int priority,
               void* detach);
void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                   long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                   long start, long end, long step);
void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                       long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                       ull start, ull end, ull step);
void GOMP_taskwait();
void GOMP_taskwait_depend(void** depend);
void GOMP_taskyield();
void GOMP_taskgroup_start();
void GOMP_taskgroup_end();

// Task reductions and the scope construct.
unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads,
                                  unsigned flags);
void GOMP_taskgroup_reduction_register(uintptr_t* data);
void GOMP_taskgroup_reduction_unregister(uintptr_t* data);
void GOMP_task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs);
void GOMP_workshare_task_reduction_unregister(bool cancelled);
void GOMP_scope_start(uintptr_t* reductions);

// The allocate clause.
void* GOMP_alloc(std::size_t alignment, std::size_t size, uintptr_t allocator);
void GOMP_free(void* block, uintptr_t allocator);

}  // extern "C"
