/* Parallel regions: team sizes (OMP_NUM_THREADS, num_threads, if), thread numbers, nested
 * regions and the level/ancestor queries, hot teams reused across many regions, barriers keeping
 * phases apart, master/masked, the omp_* ICV setters and getters, memory allocators (the
 * omp_*alloc API and the allocate clause), the teams construct on the host and its ICVs, and the
 * affinity format API, and the device memory routines on the host device. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "omp_check.h"

enum { MAX_THREADS = 64 };

static int expected_threads(void) {
  const char* text = getenv("OMP_NUM_THREADS");
  return text != NULL ? atoi(text) : omp_get_num_procs();
}

static void team_sizes(int threads) {
  int seen[MAX_THREADS] = {0};
  int size = 0;
#pragma omp parallel
  {
#pragma omp atomic
    seen[omp_get_thread_num()]++;
#pragma omp single
    size = omp_get_num_threads();
    check_equal(omp_in_parallel(), threads > 1, "omp_in_parallel", __LINE__);
    check_equal(omp_get_level(), 1, "omp_get_level", __LINE__);
  }
  check_equal(size, threads, "team size from OMP_NUM_THREADS", __LINE__);
  for (int t = 0; t < threads; ++t) check_equal(seen[t], 1, "each thread number once", __LINE__);

  int three = 0;
#pragma omp parallel num_threads(3)
#pragma omp master
  three = omp_get_num_threads();
  check_equal(three, 3, "num_threads(3)", __LINE__);

  int off = 0;
  volatile int no = 0;
#pragma omp parallel if (no)
  off = omp_get_num_threads();
  check_equal(off, 1, "if(false) runs a team of one", __LINE__);
}

static void nested(void) {
  omp_set_max_active_levels(2);
  int inner_sizes[4] = {0};
  int ancestors_ok = 1;
#pragma omp parallel num_threads(4)
  {
    const int outer = omp_get_thread_num();
#pragma omp parallel num_threads(3)
    {
      if (omp_get_level() != 2 || omp_get_active_level() != 2) ancestors_ok = 0;
      if (omp_get_ancestor_thread_num(1) != outer) ancestors_ok = 0;
      if (omp_get_ancestor_thread_num(2) != omp_get_thread_num()) ancestors_ok = 0;
      if (omp_get_ancestor_thread_num(0) != 0) ancestors_ok = 0;
      if (omp_get_team_size(1) != 4 || omp_get_team_size(2) != 3) ancestors_ok = 0;
#pragma omp atomic
      inner_sizes[outer]++;
      /* A third level is inactive: one thread. */
#pragma omp parallel num_threads(5)
      if (omp_get_num_threads() != 1 || omp_get_level() != 3) ancestors_ok = 0;
    }
  }
  check_equal(ancestors_ok, 1, "nested levels, ancestors and team sizes", __LINE__);
  for (int t = 0; t < 4; ++t) check_equal(inner_sizes[t], 3, "inner team size", __LINE__);
  omp_set_max_active_levels(1);
  int serialized = 0;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp atomic
  serialized++;
  check_equal(serialized, 2, "max-active-levels 1 serializes the inner region", __LINE__);
}

/* Many regions in a row (the hot team is reused) with barriers separating phases. */
static void phases(int threads) {
  int values[MAX_THREADS];
  long errors = 0;
  for (int region = 0; region < 200; ++region) {
#pragma omp parallel reduction(+ : errors)
    {
      const int me = omp_get_thread_num();
      const int n = omp_get_num_threads();
      for (int phase = 0; phase < 5; ++phase) {
        values[me] = region * 10 + phase;
#pragma omp barrier
        for (int t = 0; t < n; ++t) errors += values[t] != region * 10 + phase;
#pragma omp barrier
      }
    }
  }
  check_equal(errors, 0, "values written before a barrier are seen after it", __LINE__);
  (void)threads;
}

static void master_and_masked(void) {
  int master_runs = 0;
  int masked_thread = -1;
#pragma omp parallel num_threads(4)
  {
#pragma omp master
    master_runs += omp_get_thread_num() == 0;
#pragma omp masked filter(2)
    masked_thread = omp_get_thread_num();
  }
  check_equal(master_runs, 1, "master runs once, on thread 0", __LINE__);
  check_equal(masked_thread, 2, "masked filter(2)", __LINE__);
}

static void icvs(void) {
  omp_set_num_threads(2);
  check_equal(omp_get_max_threads(), 2, "omp_set_num_threads", __LINE__);
  int size = 0;
#pragma omp parallel
#pragma omp single
  size = omp_get_num_threads();
  check_equal(size, 2, "team of omp_set_num_threads", __LINE__);
  omp_set_dynamic(1);
  check_equal(omp_get_dynamic(), 1, "omp_set_dynamic", __LINE__);
  omp_set_dynamic(0);
  omp_set_schedule(omp_sched_guided, 7);
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  check_equal(kind, omp_sched_guided, "omp_get_schedule kind", __LINE__);
  check_equal(chunk, 7, "omp_get_schedule chunk", __LINE__);
  check_equal(omp_get_level(), 0, "level outside regions", __LINE__);
  check_equal(omp_get_thread_num(), 0, "thread number outside regions", __LINE__);
  check_equal(omp_get_num_threads(), 1, "team size outside regions", __LINE__);
  check_equal(omp_get_supported_active_levels() >= 2, 1, "supported active levels", __LINE__);
  check_equal(omp_get_num_procs() >= 1, 1, "omp_get_num_procs", __LINE__);
  check_equal(omp_is_initial_device(), 1, "omp_is_initial_device", __LINE__);
  const double start = omp_get_wtime();
  check_equal(omp_get_wtime() >= start, 1, "omp_get_wtime is monotonic", __LINE__);
}

static void memory(void) {
  const omp_alloctrait_t aligned_traits[] = {{omp_atk_alignment, 256}};
  const omp_allocator_handle_t aligned =
      omp_init_allocator(omp_default_mem_space, 1, aligned_traits);
  const omp_alloctrait_t pinned_traits[] = {{omp_atk_pinned, omp_atv_true}};
  check_equal(omp_init_allocator(omp_default_mem_space, 1, pinned_traits) == omp_null_allocator, 1,
              "an allocator with traits weft cannot honour is null", __LINE__);
  /* A pool of 1 KiB: past it, the null fallback gives nothing until a block is freed. */
  const omp_alloctrait_t pool_traits[] = {{omp_atk_pool_size, 1024},
                                          {omp_atk_fallback, omp_atv_null_fb}};
  const omp_allocator_handle_t pool = omp_init_allocator(omp_default_mem_space, 2, pool_traits);
  void* first = omp_alloc(768, pool);
  check_equal(first != NULL, 1, "a block within the pool", __LINE__);
  check_equal(omp_alloc(512, pool) == NULL, 1, "a block past the pool, null_fb", __LINE__);
  omp_free(first, pool);
  void* again = omp_alloc(512, pool);
  check_equal(again != NULL, 1, "a block after the pool was given back", __LINE__);
  omp_free(again, pool);
  omp_destroy_allocator(pool);
  check_equal(omp_alloc(0, omp_default_mem_alloc) == NULL, 1, "omp_alloc of 0 bytes", __LINE__);
  long wrong = 0;
#pragma omp parallel reduction(+ : wrong)
  {
    char* block = omp_aligned_alloc(64, 1000, omp_default_mem_alloc);
    wrong += block == NULL || (uintptr_t)block % 64 != 0;
    memset(block, 7, 1000);
    block = omp_realloc(block, 5000, omp_default_mem_alloc, omp_default_mem_alloc);
    wrong += block == NULL || block[999] != 7;
    omp_free(block, omp_default_mem_alloc);
    int* zeros = omp_calloc(100, sizeof(int), omp_low_lat_mem_alloc);
    for (int i = 0; i < 100; ++i) wrong += zeros[i] != 0;
    omp_free(zeros, omp_null_allocator);
    double* big = omp_alloc(4096, aligned);
    wrong += big == NULL || (uintptr_t)big % 256 != 0;
    omp_free(big, aligned);
  }
  int value = 3;
#pragma omp parallel firstprivate(value) allocate(omp_high_bw_mem_alloc : value) \
    reduction(+ : wrong)
  {
    wrong += value != 3;
    value += omp_get_thread_num();
  }
  omp_destroy_allocator(aligned);
  check_equal(wrong, 0, "omp_alloc family and the allocate clause", __LINE__);
}

static void teams(void) {
  int ran[4] = {0};
  int inner[4] = {0};
  int league = 0;
  long sum = 0;
#pragma omp teams num_teams(4) thread_limit(2) reduction(+ : sum)
  {
    const int team = omp_get_team_num();
    ran[team]++;
    if (team == 0) league = omp_get_num_teams();
#pragma omp distribute
    for (int i = 0; i < 100; ++i) sum += i;
#pragma omp parallel
    {
      if (omp_get_team_num() == team && omp_get_num_teams() == 4) {
#pragma omp atomic
        inner[team]++;
      }
    }
  }
  check_equal(league, 4, "omp_get_num_teams in teams", __LINE__);
  check_equal(sum, 4950, "distribute over the league", __LINE__);
  for (int t = 0; t < 4; ++t) {
    check_equal(ran[t], 1, "each team's initial thread runs the region", __LINE__);
    check_equal(inner[t] >= 1 && inner[t] <= 2, 1, "parallel in a team within thread_limit",
                __LINE__);
  }
  check_equal(omp_get_num_teams(), 1, "one team outside teams", __LINE__);
}

/* nteams-var and teams-thread-limit-var give a teams construct without clauses its size. */
static void teams_icvs(void) {
  omp_set_num_teams(3);
  omp_set_teams_thread_limit(2);
  check_equal(omp_get_max_teams(), 3, "omp_get_max_teams", __LINE__);
  check_equal(omp_get_teams_thread_limit(), 2, "omp_get_teams_thread_limit", __LINE__);
  int league = 0;
  int limit = 0;
#pragma omp teams
  {
    if (omp_get_team_num() == 0) league = omp_get_num_teams();
      /* GCC accepts only the team queries directly inside teams. */
#pragma omp parallel num_threads(1)
    if (omp_get_team_num() == 0) limit = omp_get_thread_limit();
  }
  check_equal(league, 3, "teams without num_teams: nteams-var", __LINE__);
  check_equal(limit, 2, "teams without thread_limit: teams-thread-limit-var", __LINE__);
}

static void affinity_format(void) {
  char buffer[64];
  omp_set_affinity_format("T%n/%N L%L");
  check_equal((long)omp_get_affinity_format(buffer, sizeof buffer), 10, "format length", __LINE__);
  check_equal(strcmp(buffer, "T%n/%N L%L"), 0, "omp_get_affinity_format", __LINE__);
  int wrong = 0;
#pragma omp parallel num_threads(3) reduction(+ : wrong)
  {
    char mine[64];
    char expected[64];
    omp_capture_affinity(mine, sizeof mine, NULL);
    snprintf(expected, sizeof expected, "T%d/3 L1", omp_get_thread_num());
    wrong += strcmp(mine, expected) != 0;
  }
  check_equal(wrong, 0, "omp_capture_affinity with affinity-format-var", __LINE__);
  omp_capture_affinity(buffer, sizeof buffer, "[%0.3n][%3n][%{num_threads}][%.2a]%%");
  check_equal(strcmp(buffer, "[000][0  ][1][-1]%"), 0, "widths, long names, %%", __LINE__);
  char small[4];
  const size_t needed = omp_capture_affinity(small, sizeof small, "%0.8n");
  check_equal((long)needed, 8, "the length a cut capture needed", __LINE__);
  check_equal(strcmp(small, "000"), 0, "a capture cut to its buffer", __LINE__);
}

static void device_memory(void) {
  const int host = omp_get_initial_device();
  int* block = omp_target_alloc(8 * sizeof(int), host);
  check_equal(block != NULL, 1, "omp_target_alloc on the host", __LINE__);
  const int source[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  memset(block, 0, 8 * sizeof(int));
  check_equal(
      omp_target_memcpy(block, source, 4 * sizeof(int), 2 * sizeof(int), sizeof(int), host, host),
      0, "omp_target_memcpy", __LINE__);
  for (int i = 0; i < 4; ++i) check_equal(block[2 + i], 1 + i, "copied with offsets", __LINE__);
  check_equal(omp_target_is_present(block, host), 1, "host memory is present", __LINE__);
  check_equal(omp_target_alloc(8, host + 1) == NULL, 1, "no device but the host", __LINE__);
  check_equal(omp_target_memcpy(block, source, 4, 0, 0, host + 1, host) != 0, 1,
              "a copy to a device that does not exist fails", __LINE__);
  /* A 2x2 block at (1, 1) of a 3x4 array into a 2x3 array at (0, 1). */
  const int grid[3][4] = {{0, 1, 2, 3}, {10, 11, 12, 13}, {20, 21, 22, 23}};
  int target[2][3] = {{-1, -1, -1}, {-1, -1, -1}};
  const size_t volume[2] = {2, 2};
  const size_t dst_offsets[2] = {0, 1};
  const size_t src_offsets[2] = {1, 1};
  const size_t dst_dims[2] = {2, 3};
  const size_t src_dims[2] = {3, 4};
  check_equal(omp_target_memcpy_rect(target, grid, sizeof(int), 2, volume, dst_offsets, src_offsets,
                                     dst_dims, src_dims, host, host),
              0, "omp_target_memcpy_rect", __LINE__);
  check_equal(target[0][0] * 1000000L + target[0][1] * 1000 + target[0][2], -1000000L + 11012,
              "first row of the rectangle", __LINE__);
  check_equal(target[1][0] * 1000000L + target[1][1] * 1000 + target[1][2], -1000000L + 21022,
              "second row of the rectangle", __LINE__);
  omp_target_free(block, host);
}

int main(void) {
  const int threads = expected_threads();
  team_sizes(threads);
  phases(threads);
  nested();
  master_and_masked();
  icvs();
  memory();
  teams();
  teams_icvs();
  affinity_format();
  device_memory();
  return omp_check_status("omp_parallel");
}
