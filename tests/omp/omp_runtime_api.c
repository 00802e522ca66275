/* The omp_* calls no other program checks: places and binding (against OMP_PROC_BIND and
 * OMP_PLACES, cores or numa_domains, as the registration sets them: omp.runtime_api.*), nesting,
 * locks with hints, devices, the default allocator, pausing, the clock's tick, and what
 * omp_display_env and omp_display_affinity print. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "omp_check.h"

enum { kMaxThreads = 64, kMaxPlaces = 256 };

/* OMP_PROC_BIND's element for nesting `level` (0: the initial thread), the last one past the end
 * of the list; false when unset. */
static omp_proc_bind_t bind_at(int level) {
  const char* text = getenv("OMP_PROC_BIND");
  if (text == NULL) return omp_proc_bind_false;
  for (int at = 0; at < level && strchr(text, ',') != NULL; ++at) text = strchr(text, ',') + 1;
  if (strncmp(text, "close", 5) == 0) return omp_proc_bind_close;
  if (strncmp(text, "spread", 6) == 0) return omp_proc_bind_spread;
  if (strncmp(text, "true", 4) == 0) return omp_proc_bind_true;
  if (strncmp(text, "primary", 7) == 0) return omp_proc_bind_primary;
  return omp_proc_bind_false;
}

/* Runs `print` with file descriptor `fd` sent to a temporary file, and returns what it wrote
 * (static storage, up to 4 KiB). Under weftrun the ranks are threads of one process and share its
 * descriptors: a lock on the program file, which each rank opens for itself, keeps the others'
 * captures out meanwhile (taken without blocking the core, which the holder may need). */
static const char* captured(int fd, void (*print)(void)) {
  static char text[4096];
  const int exclusive = open("/proc/self/exe", O_RDONLY);
  while (flock(exclusive, LOCK_EX | LOCK_NB) != 0) {
#pragma omp taskyield
  }
  FILE* file = tmpfile();
  const int saved = dup(fd);
  fflush(NULL);
  dup2(fileno(file), fd);
  print();
  fflush(NULL);
  dup2(saved, fd);
  close(saved);
  close(exclusive);
  rewind(file);
  const size_t length = fread(text, 1, sizeof text - 1, file);
  text[length] = '\0';
  fclose(file);
  return text;
}

/* OMP_PLACES=numa_domains (or sockets) makes NUMA nodes the places, else they are cores. */
static int numa_places(void) {
  const char* text = getenv("OMP_PLACES");
  return text != NULL && (strcmp(text, "numa_domains") == 0 || strcmp(text, "sockets") == 0);
}

/* The NUMA node of processor `cpu`, as Linux lists it (node 0 without NUMA information). */
static int node_of(int cpu) {
  char path[64];
  for (int node = 0; node < kMaxPlaces; ++node) {
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/node%d", cpu, node);
    if (access(path, F_OK) == 0) return node;
  }
  return 0;
}

/* The processors of `place` (up to kMaxPlaces), and how many. */
static int place_processors(int place, int* ids) {
  const int count = omp_get_place_num_procs(place);
  if (count < 1 || count > kMaxPlaces) return 0;
  omp_get_place_proc_ids(place, ids);
  return count;
}

/* The places split the rank's processors: each processor of the machine, in one place only; a
 * core place holds one, a NUMA place those of one node, another node than the other places'. */
static void places(void) {
  const int count = omp_get_num_places();
  check_equal(count >= 1 && count <= kMaxPlaces, 1, "a sane number of places", __LINE__);
  const long processors = sysconf(_SC_NPROCESSORS_CONF);
  int seen[kMaxPlaces];
  int seen_count = 0;
  int nodes[kMaxPlaces];
  for (int place = 0; place < count && place < kMaxPlaces; ++place) {
    int ids[kMaxPlaces];
    const int in_place = place_processors(place, ids);
    check_equal(in_place >= 1, 1, "omp_get_place_num_procs(place) is positive", __LINE__);
    if (!numa_places()) check_equal(in_place, 1, "processors of a core place", __LINE__);
    for (int i = 0; i < in_place; ++i) {
      check_equal(ids[i] >= 0 && ids[i] < processors, 1, "a place's processor is the machine's",
                  __LINE__);
      for (int other = 0; other < seen_count; ++other) {
        check_equal(seen[other] != ids[i], 1, "a processor in one place only", __LINE__);
      }
      if (seen_count < kMaxPlaces) seen[seen_count++] = ids[i];
      if (numa_places()) {
        check_equal(node_of(ids[i]), node_of(ids[0]), "a NUMA place's processors share a node",
                    __LINE__);
      }
    }
    nodes[place] = in_place > 0 ? node_of(ids[0]) : -1;
    for (int other = 0; other < place && numa_places(); ++other) {
      check_equal(nodes[other] != nodes[place], 1, "NUMA places are distinct nodes", __LINE__);
    }
  }
  check_equal(seen_count, omp_get_num_procs(), "processors of all places", __LINE__);
  check_equal(omp_get_place_num_procs(-1), 0, "omp_get_place_num_procs(-1)", __LINE__);
  check_equal(omp_get_place_num_procs(count), 0, "omp_get_place_num_procs(past the end)", __LINE__);
}

/* Each worker of a bound team sits on the place its policy gives it, counted from the master's
 * (docs/omp_bridge.md, Placement), runs on that place's processor, and finds its place in its
 * partition. */
static void binding(void) {
  int place[kMaxThreads];
  int cpu_ok[kMaxThreads];
  int in_partition[kMaxThreads];
  int bind_inside[kMaxThreads];
  int team = 0;
  const omp_proc_bind_t outer = bind_at(0);
  check_equal(omp_get_proc_bind(), outer, "omp_get_proc_bind() of the initial thread", __LINE__);
#pragma omp parallel shared(place, cpu_ok, in_partition, bind_inside, team)
  {
    const int num = omp_get_thread_num();
    if (num == 0) team = omp_get_num_threads();
    if (num < kMaxThreads) {
      place[num] = omp_get_place_num();
      int ids[kMaxPlaces];
      const int in_place = place_processors(place[num], ids);
      const int cpu = sched_getcpu();
      cpu_ok[num] = 0;
      for (int i = 0; i < in_place; ++i) cpu_ok[num] += ids[i] == cpu;
      int nums[kMaxPlaces];
      const int count = omp_get_partition_num_places();
      in_partition[num] = 0;
      if (count >= 1 && count <= kMaxPlaces) {
        omp_get_partition_place_nums(nums);
        for (int i = 0; i < count; ++i) in_partition[num] += nums[i] == place[num];
      }
      bind_inside[num] = omp_get_proc_bind();
    }
  }
  const int places = omp_get_num_places();
  const omp_proc_bind_t inner = bind_at(1);
  for (int num = 0; num < team && num < kMaxThreads; ++num) {
    if (outer == omp_proc_bind_false) {
      check_equal(place[num], -1, "omp_get_place_num() of an unbound thread", __LINE__);
    } else {
      check_equal(place[num] >= 0 && place[num] < places, 1, "omp_get_place_num() is a place",
                  __LINE__);
      check_equal(in_partition[num], 1, "a thread's place is once in its partition", __LINE__);
    }
    check_equal(bind_inside[num], inner, "omp_get_proc_bind() in the team", __LINE__);
  }
  if (outer == omp_proc_bind_false || team < 2) return;
  for (int num = 1; num < team && num < kMaxThreads; ++num) {
    check_equal(cpu_ok[num], 1, "a bound worker runs on a processor of its place", __LINE__);
  }
  /* The policy spaces workers over the cores (docs/omp_bridge.md, Placement). */
  if (numa_places()) return;
  const int spread = outer == omp_proc_bind_spread && team < places;
  const int first = (place[1] - (spread ? places / team : 1) + places) % places;
  for (int num = 1; num < team && num < kMaxThreads; ++num) {
    const int offset = spread ? num * places / team : num;
    check_equal(place[num], (first + offset) % places, "a bound worker's place", __LINE__);
  }
  if (outer == omp_proc_bind_close) {
    /* close keeps every thread's partition the whole place list. */
    check_equal(omp_get_partition_num_places(), places, "partition under close", __LINE__);
  }
}

/* A team nested in a worker of a bound team places its own worker from that worker's place, by
 * the policy of the next level of OMP_PROC_BIND (nesting being on for its list's levels). */
static void nested_binding(void) {
  const omp_proc_bind_t inner = bind_at(1);
  const int places = omp_get_num_places();
  if (inner == omp_proc_bind_false || numa_places() || omp_get_max_active_levels() < 2) return;
  const int offset = inner == omp_proc_bind_spread && 2 < places ? places / 2 : 1;
  int checked = 0;
  int misplaced = 0;
  int wrong_bind = 0;
#pragma omp parallel num_threads(2) reduction(+ : checked, misplaced, wrong_bind)
  {
    const int outer_num = omp_get_thread_num();
    const int master_place = omp_get_place_num();
#pragma omp parallel num_threads(2) reduction(+ : checked, misplaced, wrong_bind)
    if (outer_num == 1 && omp_get_thread_num() == 1) {
      checked++;
      misplaced += omp_get_place_num() != (master_place + offset) % places;
      wrong_bind += omp_get_proc_bind() != bind_at(2);
    }
  }
  check_equal(checked, 1, "nested teams of a worker", __LINE__);
  check_equal(misplaced, 0, "a nested worker's place, from its master's", __LINE__);
  check_equal(wrong_bind, 0, "omp_get_proc_bind() at the second level", __LINE__);
}

static void nesting(void) {
  const int levels = omp_get_max_active_levels();
  omp_set_nested(0);
  check_equal(omp_get_nested(), 0, "omp_get_nested() after omp_set_nested(0)", __LINE__);
  check_equal(omp_get_max_active_levels(), 1, "max-active-levels after omp_set_nested(0)",
              __LINE__);
  int inner = 0;
#pragma omp parallel num_threads(2) shared(inner)
#pragma omp parallel num_threads(2) shared(inner)
#pragma omp atomic
  inner++;
  check_equal(inner, 2, "threads of inactive nested teams", __LINE__);
  omp_set_nested(1);
  check_equal(omp_get_nested(), 1, "omp_get_nested() after omp_set_nested(1)", __LINE__);
  check_equal(omp_get_max_active_levels() > 1, 1, "max-active-levels after omp_set_nested(1)",
              __LINE__);
  inner = 0;
#pragma omp parallel num_threads(2) shared(inner)
#pragma omp parallel num_threads(2) shared(inner)
#pragma omp atomic
  inner++;
  check_equal(inner, 4, "threads of active nested teams", __LINE__);
  omp_set_max_active_levels(levels);
}

static void locks_with_hints(void) {
  omp_lock_t lock;
  omp_nest_lock_t nest;
  omp_init_lock_with_hint(&lock, omp_sync_hint_contended);
  omp_init_nest_lock_with_hint(&nest, omp_sync_hint_uncontended | omp_sync_hint_speculative);
  long plain = 0;
  long nested = 0;
#pragma omp parallel shared(lock, nest, plain, nested)
  for (int i = 0; i < 1000; ++i) {
    omp_set_lock(&lock);
    plain = plain + 1;
    omp_unset_lock(&lock);
    omp_set_nest_lock(&nest);
    omp_set_nest_lock(&nest);
    nested = nested + 1;
    omp_unset_nest_lock(&nest);
    omp_unset_nest_lock(&nest);
  }
  omp_destroy_lock(&lock);
  omp_destroy_nest_lock(&nest);
  check_equal(plain, 1000L * omp_get_max_threads(), "count under a lock with a hint", __LINE__);
  check_equal(nested, 1000L * omp_get_max_threads(), "count under a nest lock with a hint",
              __LINE__);
}

static void devices_and_memory(void) {
  check_equal(omp_get_num_devices(), 0, "omp_get_num_devices()", __LINE__);
  omp_set_default_device(0);
  check_equal(omp_get_default_device(), 0, "omp_get_default_device()", __LINE__);
  check_equal(omp_get_device_num(), omp_get_initial_device(), "omp_get_device_num() on the host",
              __LINE__);
  int host = 0;
  check_equal(omp_target_associate_ptr(&host, &host, sizeof host, 0, 0) != 0, 1,
              "omp_target_associate_ptr without a device fails", __LINE__);
  check_equal(omp_target_disassociate_ptr(&host, 0) != 0, 1,
              "omp_target_disassociate_ptr without a device fails", __LINE__);

  const omp_allocator_handle_t previous = omp_get_default_allocator();
  omp_set_default_allocator(omp_high_bw_mem_alloc);
  check_equal((long)omp_get_default_allocator(), (long)omp_high_bw_mem_alloc,
              "omp_get_default_allocator() after omp_set_default_allocator", __LINE__);
  omp_set_default_allocator(previous);
  int* block = omp_aligned_calloc(256, 1000, sizeof(int), omp_default_mem_alloc);
  check_equal(block != NULL, 1, "omp_aligned_calloc", __LINE__);
  if (block != NULL) {
    check_equal((long)((uintptr_t)block % 256), 0, "omp_aligned_calloc's alignment", __LINE__);
    long nonzero = 0;
    for (int i = 0; i < 1000; ++i) nonzero += block[i] != 0;
    check_equal(nonzero, 0, "omp_aligned_calloc zeroes", __LINE__);
    omp_free(block, omp_default_mem_alloc);
  }

  /* omp_realloc frees the old block as it makes the new one: in a pool of 4096 bytes, 3071
   * bytes become 3072; 4 more cannot become 3072, and stay as they were. */
  const omp_alloctrait_t traits[] = {{omp_atk_fallback, omp_atv_null_fb},
                                     {omp_atk_pool_size, 4096}};
  const omp_allocator_handle_t pool = omp_init_allocator(omp_default_mem_space, 2, traits);
  char* big = omp_alloc(3071, pool);
  if (big != NULL) big[0] = 'b';
  big = omp_realloc(big, 3072, pool, pool);
  check_equal(big != NULL && big[0] == 'b', 1, "omp_realloc within a pool's size", __LINE__);
  int* small = omp_alloc(sizeof(int), pool);
  if (small != NULL) *small = 42;
  check_equal(omp_realloc(small, 3072, pool, pool) == NULL, 1, "omp_realloc past a pool's size",
              __LINE__);
  check_equal(small != NULL && *small == 42, 1, "a block omp_realloc could not move", __LINE__);
  check_equal(omp_alloc(4096 - 3072 - sizeof(int) + 1, pool) == NULL, 1,
              "the pool still counts both blocks", __LINE__);
  omp_free(small, pool);
  omp_free(big, pool);
  omp_destroy_allocator(pool);
}

/* Pausing ends the caller's hot workers outside a region (refused inside one, and for another
 * device), and teams run after it. */
static void pausing_and_clock(void) {
  int inside = 0;
#pragma omp parallel num_threads(2) reduction(+ : inside)
  inside += omp_pause_resource_all(omp_pause_soft) != 0;
  check_equal(inside, omp_get_max_threads() >= 2 ? 2 : 1, "omp_pause_resource_all in a region",
              __LINE__);
  check_equal(omp_pause_resource(omp_pause_soft, omp_get_initial_device() + 1), -1,
              "omp_pause_resource of another device", __LINE__);
  check_equal(omp_pause_resource(omp_pause_soft, omp_get_initial_device()), 0, "omp_pause_resource",
              __LINE__);
  check_equal(omp_pause_resource_all(omp_pause_hard), 0, "omp_pause_resource_all", __LINE__);
  int threads = 0;
#pragma omp parallel reduction(+ : threads)
  threads++;
  check_equal(threads, omp_get_max_threads(), "a team after a pause", __LINE__);
  const double tick = omp_get_wtick();
  check_equal(tick > 0.0 && tick <= 1e-3, 1, "omp_get_wtick() is a positive sub-millisecond",
              __LINE__);
}

static void display_env(void) {
  omp_display_env(0);
}

static void display_affinity(void) {
#pragma omp parallel
  omp_display_affinity("thread %n of %N");
}

static void displays(void) {
  const char* env = captured(2, display_env);
  check_equal(strstr(env, "OPENMP DISPLAY ENVIRONMENT BEGIN") != NULL, 1,
              "omp_display_env's header", __LINE__);
  const char* shown = numa_places() ? "OMP_PLACES = 'numa_domains'" : "OMP_PLACES = 'cores'";
  check_equal(strstr(env, shown) != NULL, 1, "omp_display_env's OMP_PLACES", __LINE__);
  const char* affinity = captured(1, display_affinity);
  const int team = omp_get_max_threads();
  for (int num = 0; num < team; ++num) {
    char line[64];
    snprintf(line, sizeof line, "thread %d of %d\n", num, team);
    check_equal(strstr(affinity, line) != NULL, 1, "omp_display_affinity's line of a thread",
                __LINE__);
  }
}

int main(void) {
  places();
  binding();
  nested_binding();
  nesting();
  locks_with_hints();
  devices_and_memory();
  pausing_and_clock();
  displays();
  return omp_check_status("omp_runtime_api");
}
