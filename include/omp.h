/* The OpenMP runtime API as weft provides it (omp_bridge/): programs built with weftcc -fopenmp
 * include this header instead of GCC's and link weft's runtime instead of libgomp. The lock types
 * have libgomp's sizes, so that objects compiled against GCC's omp.h link as well. */
#ifndef WEFT_OMP_H
#define WEFT_OMP_H

#ifdef __cplusplus
extern "C" {
#define WEFT_OMP_NOTHROW throw()
#else
#define WEFT_OMP_NOTHROW __attribute__((__nothrow__))
#endif

typedef struct {
  unsigned char _x[4] __attribute__((__aligned__(4)));
} omp_lock_t;

typedef struct {
  unsigned char _x[16] __attribute__((__aligned__(8)));
} omp_nest_lock_t;

typedef enum omp_sched_t {
  omp_sched_static = 1,
  omp_sched_dynamic = 2,
  omp_sched_guided = 3,
  omp_sched_auto = 4,
  omp_sched_monotonic = (int)0x80000000U
} omp_sched_t;

typedef enum omp_proc_bind_t {
  omp_proc_bind_false = 0,
  omp_proc_bind_true = 1,
  omp_proc_bind_primary = 2,
  omp_proc_bind_master = 2,
  omp_proc_bind_close = 3,
  omp_proc_bind_spread = 4
} omp_proc_bind_t;

typedef enum omp_sync_hint_t {
  omp_sync_hint_none = 0,
  omp_lock_hint_none = 0,
  omp_sync_hint_uncontended = 1,
  omp_lock_hint_uncontended = 1,
  omp_sync_hint_contended = 2,
  omp_lock_hint_contended = 2,
  omp_sync_hint_nonspeculative = 4,
  omp_lock_hint_nonspeculative = 4,
  omp_sync_hint_speculative = 8,
  omp_lock_hint_speculative = 8
} omp_sync_hint_t;
typedef omp_sync_hint_t omp_lock_hint_t;

typedef enum omp_pause_resource_t { omp_pause_soft = 1, omp_pause_hard = 2 } omp_pause_resource_t;

/* What `#pragma omp depobj` fills in. The compiler generates the code that reads and writes it,
 * so the type is the compiler's own: GCC stores a dependence's address and kind in it (libgomp's
 * layout); clang stores a pointer to a dependence array it allocates through __kmpc_alloc, and
 * its code generation handles only a pointer (with GCC's structure clang 14's backend fails:
 * "Cannot select: i64 = bitcast"). An object holding a depobj is therefore not passed between
 * code of the two compilers. */
#if defined(__clang__)
typedef void* omp_depend_t;
#else
typedef struct omp_depend_t {
  char __omp_depend_t__[2 * sizeof(void*)];
} omp_depend_t;
#endif

/* The event of a task's detach clause (the address of the task, as GCC's libgomp has it). */
typedef enum omp_event_handle_t { __omp_event_handle_t_max__ = __UINTPTR_MAX__ } omp_event_handle_t;

typedef enum omp_memspace_handle_t {
  omp_default_mem_space = 0,
  omp_large_cap_mem_space = 1,
  omp_const_mem_space = 2,
  omp_high_bw_mem_space = 3,
  omp_low_lat_mem_space = 4,
  weft_omp_memspace_handle_t_max = __UINTPTR_MAX__
} omp_memspace_handle_t;

typedef enum omp_allocator_handle_t {
  omp_null_allocator = 0,
  omp_default_mem_alloc = 1,
  omp_large_cap_mem_alloc = 2,
  omp_const_mem_alloc = 3,
  omp_high_bw_mem_alloc = 4,
  omp_low_lat_mem_alloc = 5,
  omp_cgroup_mem_alloc = 6,
  omp_pteam_mem_alloc = 7,
  omp_thread_mem_alloc = 8,
  weft_omp_allocator_handle_t_max = __UINTPTR_MAX__
} omp_allocator_handle_t;

typedef enum omp_alloctrait_key_t {
  omp_atk_sync_hint = 1,
  omp_atk_alignment = 2,
  omp_atk_access = 3,
  omp_atk_pool_size = 4,
  omp_atk_fallback = 5,
  omp_atk_fb_data = 6,
  omp_atk_pinned = 7,
  omp_atk_partition = 8
} omp_alloctrait_key_t;

typedef enum omp_alloctrait_value_t {
  omp_atv_default = (__UINTPTR_TYPE__)-1,
  omp_atv_false = 0,
  omp_atv_true = 1,
  omp_atv_contended = 3,
  omp_atv_uncontended = 4,
  omp_atv_serialized = 5,
  omp_atv_private = 6,
  omp_atv_all = 7,
  omp_atv_thread = 8,
  omp_atv_pteam = 9,
  omp_atv_cgroup = 10,
  omp_atv_default_mem_fb = 11,
  omp_atv_null_fb = 12,
  omp_atv_abort_fb = 13,
  omp_atv_allocator_fb = 14,
  omp_atv_environment = 15,
  omp_atv_nearest = 16,
  omp_atv_blocked = 17,
  omp_atv_interleaved = 18
} omp_alloctrait_value_t;

typedef struct omp_alloctrait_t {
  omp_alloctrait_key_t key;
  __UINTPTR_TYPE__ value;
} omp_alloctrait_t;

/* Threads and teams. */
extern void omp_set_num_threads(int) WEFT_OMP_NOTHROW;
extern int omp_get_num_threads(void) WEFT_OMP_NOTHROW;
extern int omp_get_max_threads(void) WEFT_OMP_NOTHROW;
extern int omp_get_thread_num(void) WEFT_OMP_NOTHROW;
extern int omp_get_num_procs(void) WEFT_OMP_NOTHROW;
extern int omp_in_parallel(void) WEFT_OMP_NOTHROW;
extern void omp_set_dynamic(int) WEFT_OMP_NOTHROW;
extern int omp_get_dynamic(void) WEFT_OMP_NOTHROW;
extern void omp_set_nested(int) WEFT_OMP_NOTHROW;
extern int omp_get_nested(void) WEFT_OMP_NOTHROW;
extern int omp_get_thread_limit(void) WEFT_OMP_NOTHROW;
extern void omp_set_max_active_levels(int) WEFT_OMP_NOTHROW;
extern int omp_get_max_active_levels(void) WEFT_OMP_NOTHROW;
extern int omp_get_supported_active_levels(void) WEFT_OMP_NOTHROW;
extern int omp_get_level(void) WEFT_OMP_NOTHROW;
extern int omp_get_ancestor_thread_num(int) WEFT_OMP_NOTHROW;
extern int omp_get_team_size(int) WEFT_OMP_NOTHROW;
extern int omp_get_active_level(void) WEFT_OMP_NOTHROW;
extern void omp_set_schedule(omp_sched_t, int) WEFT_OMP_NOTHROW;
extern void omp_get_schedule(omp_sched_t*, int*) WEFT_OMP_NOTHROW;
extern int omp_in_final(void) WEFT_OMP_NOTHROW;
extern void omp_fulfill_event(omp_event_handle_t) WEFT_OMP_NOTHROW;
extern int omp_get_cancellation(void) WEFT_OMP_NOTHROW;
extern int omp_get_max_task_priority(void) WEFT_OMP_NOTHROW;

/* Places: a rank's places are the cores it owns. */
extern omp_proc_bind_t omp_get_proc_bind(void) WEFT_OMP_NOTHROW;
extern int omp_get_num_places(void) WEFT_OMP_NOTHROW;
extern int omp_get_place_num_procs(int) WEFT_OMP_NOTHROW;
extern void omp_get_place_proc_ids(int, int*) WEFT_OMP_NOTHROW;
extern int omp_get_place_num(void) WEFT_OMP_NOTHROW;
extern int omp_get_partition_num_places(void) WEFT_OMP_NOTHROW;
extern void omp_get_partition_place_nums(int*) WEFT_OMP_NOTHROW;

/* Thread affinity formats (OpenMP 5.0): fields %t team_num, %T num_teams, %L nesting_level,
 * %n thread_num, %N num_threads, %a ancestor_tnum, %H host, %P process_id, %i native_thread_id
 * (the weft thread's id), %A thread_affinity (the virtual processors of the rank's cores), also
 * spelled %{name}, with an optional [0][.]width. */
extern void omp_set_affinity_format(const char*) WEFT_OMP_NOTHROW;
extern __SIZE_TYPE__ omp_get_affinity_format(char*, __SIZE_TYPE__) WEFT_OMP_NOTHROW;
extern void omp_display_affinity(const char*) WEFT_OMP_NOTHROW;
extern __SIZE_TYPE__ omp_capture_affinity(char*, __SIZE_TYPE__, const char*) WEFT_OMP_NOTHROW;

/* Devices: weft runs on the host only. */
extern void omp_set_default_device(int) WEFT_OMP_NOTHROW;
extern int omp_get_default_device(void) WEFT_OMP_NOTHROW;
extern int omp_get_num_devices(void) WEFT_OMP_NOTHROW;
extern int omp_get_device_num(void) WEFT_OMP_NOTHROW;
extern int omp_get_num_teams(void) WEFT_OMP_NOTHROW;
extern int omp_get_team_num(void) WEFT_OMP_NOTHROW;
extern void omp_set_num_teams(int) WEFT_OMP_NOTHROW;
extern int omp_get_max_teams(void) WEFT_OMP_NOTHROW;
extern void omp_set_teams_thread_limit(int) WEFT_OMP_NOTHROW;
extern int omp_get_teams_thread_limit(void) WEFT_OMP_NOTHROW;
extern int omp_is_initial_device(void) WEFT_OMP_NOTHROW;
extern int omp_get_initial_device(void) WEFT_OMP_NOTHROW;
/* Device memory routines, for the host device only (its memory is the heap). */
extern void* omp_target_alloc(__SIZE_TYPE__, int) WEFT_OMP_NOTHROW;
extern void omp_target_free(void*, int) WEFT_OMP_NOTHROW;
extern int omp_target_is_present(const void*, int) WEFT_OMP_NOTHROW;
extern int omp_target_memcpy(void*, const void*, __SIZE_TYPE__, __SIZE_TYPE__, __SIZE_TYPE__, int,
                             int) WEFT_OMP_NOTHROW;
extern int omp_target_memcpy_rect(void*, const void*, __SIZE_TYPE__, int, const __SIZE_TYPE__*,
                                  const __SIZE_TYPE__*, const __SIZE_TYPE__*, const __SIZE_TYPE__*,
                                  const __SIZE_TYPE__*, int, int) WEFT_OMP_NOTHROW;
extern int omp_target_associate_ptr(const void*, const void*, __SIZE_TYPE__, __SIZE_TYPE__,
                                    int) WEFT_OMP_NOTHROW;
extern int omp_target_disassociate_ptr(const void*, int) WEFT_OMP_NOTHROW;

/* Locks. */
extern void omp_init_lock(omp_lock_t*) WEFT_OMP_NOTHROW;
extern void omp_init_lock_with_hint(omp_lock_t*, omp_sync_hint_t) WEFT_OMP_NOTHROW;
extern void omp_destroy_lock(omp_lock_t*) WEFT_OMP_NOTHROW;
extern void omp_set_lock(omp_lock_t*) WEFT_OMP_NOTHROW;
extern void omp_unset_lock(omp_lock_t*) WEFT_OMP_NOTHROW;
extern int omp_test_lock(omp_lock_t*) WEFT_OMP_NOTHROW;
extern void omp_init_nest_lock(omp_nest_lock_t*) WEFT_OMP_NOTHROW;
extern void omp_init_nest_lock_with_hint(omp_nest_lock_t*, omp_sync_hint_t) WEFT_OMP_NOTHROW;
extern void omp_destroy_nest_lock(omp_nest_lock_t*) WEFT_OMP_NOTHROW;
extern void omp_set_nest_lock(omp_nest_lock_t*) WEFT_OMP_NOTHROW;
extern void omp_unset_nest_lock(omp_nest_lock_t*) WEFT_OMP_NOTHROW;
extern int omp_test_nest_lock(omp_nest_lock_t*) WEFT_OMP_NOTHROW;

/* Timing. */
extern double omp_get_wtime(void) WEFT_OMP_NOTHROW;
extern double omp_get_wtick(void) WEFT_OMP_NOTHROW;

/* Memory: every memory space is the process heap (weft has no high-bandwidth or pinned
 * memory); an allocator made by omp_init_allocator honours alignment, and traits it cannot honour
 * (pool_size, fallback other than default_mem_fb, pinned, partition) make it omp_null_allocator. */
extern omp_allocator_handle_t omp_init_allocator(omp_memspace_handle_t, int,
                                                 const omp_alloctrait_t[]) WEFT_OMP_NOTHROW;
extern void omp_destroy_allocator(omp_allocator_handle_t) WEFT_OMP_NOTHROW;
extern void omp_set_default_allocator(omp_allocator_handle_t) WEFT_OMP_NOTHROW;
extern omp_allocator_handle_t omp_get_default_allocator(void) WEFT_OMP_NOTHROW;
/* In C++ the allocator arguments default to omp_null_allocator, as OpenMP specifies. */
#ifdef __cplusplus
#define WEFT_OMP_NULL_ALLOCATOR = omp_null_allocator
#else
#define WEFT_OMP_NULL_ALLOCATOR
#endif
extern void* omp_alloc(__SIZE_TYPE__,
                       omp_allocator_handle_t WEFT_OMP_NULL_ALLOCATOR) WEFT_OMP_NOTHROW;
extern void* omp_aligned_alloc(__SIZE_TYPE__, __SIZE_TYPE__,
                               omp_allocator_handle_t WEFT_OMP_NULL_ALLOCATOR) WEFT_OMP_NOTHROW;
extern void* omp_calloc(__SIZE_TYPE__, __SIZE_TYPE__,
                        omp_allocator_handle_t WEFT_OMP_NULL_ALLOCATOR) WEFT_OMP_NOTHROW;
extern void* omp_aligned_calloc(__SIZE_TYPE__, __SIZE_TYPE__, __SIZE_TYPE__,
                                omp_allocator_handle_t WEFT_OMP_NULL_ALLOCATOR) WEFT_OMP_NOTHROW;
extern void* omp_realloc(void*, __SIZE_TYPE__, omp_allocator_handle_t WEFT_OMP_NULL_ALLOCATOR,
                         omp_allocator_handle_t WEFT_OMP_NULL_ALLOCATOR) WEFT_OMP_NOTHROW;
extern void omp_free(void*, omp_allocator_handle_t WEFT_OMP_NULL_ALLOCATOR) WEFT_OMP_NOTHROW;
#undef WEFT_OMP_NULL_ALLOCATOR

extern int omp_pause_resource(omp_pause_resource_t, int) WEFT_OMP_NOTHROW;
extern int omp_pause_resource_all(omp_pause_resource_t) WEFT_OMP_NOTHROW;
extern void omp_display_env(int) WEFT_OMP_NOTHROW;

/* libomp's memory API, which programs written for LLVM's runtime call: the process heap. */
extern void* kmp_malloc(__SIZE_TYPE__) WEFT_OMP_NOTHROW;
extern void* kmp_aligned_malloc(__SIZE_TYPE__, __SIZE_TYPE__) WEFT_OMP_NOTHROW;
extern void* kmp_calloc(__SIZE_TYPE__, __SIZE_TYPE__) WEFT_OMP_NOTHROW;
extern void* kmp_realloc(void*, __SIZE_TYPE__) WEFT_OMP_NOTHROW;
extern void kmp_free(void*) WEFT_OMP_NOTHROW;

#undef WEFT_OMP_NOTHROW

#ifdef __cplusplus
}
#endif

#endif
