/* One-sided communication between ranks 0 (origin) and 1 (target), then a halo exchange over
 * every rank. The same source is built with weftcc and Open MPI's mpicc (bench/mpi/rma_run).
 *
 *   rma <seconds> <allocate|create> [halo_only]
 *
 * The window is made by MPI_Win_allocate or MPI_Win_create (malloc'd memory); rank 0 holds a
 * passive-target epoch (MPI_Win_lock_all) on it for the point-to-point figures:
 * - put_latency_<size>, get_latency_<size> (us): one MPI_Put or MPI_Get then MPI_Win_flush, the
 *   time until the data is at the target (or here), 8 B to 4 MiB;
 * - put_bandwidth_<size>, get_bandwidth_<size> (MB/s, 10^6 bytes): a window of operations in
 *   flight then one MPI_Win_flush, as OSU's osu_put_bw does;
 * - acc_rate (Mops/s): MPI_Accumulate of one int64 with MPI_SUM, 64 of them per MPI_Win_flush;
 * - fop_rate (Mops/s): MPI_Fetch_and_op of one int64 with MPI_SUM then MPI_Win_flush (the result
 *   is needed before the next);
 * - halo_<size> (us): every rank of a ring puts a face of <size> into each neighbour's ghost cells
 *   between two MPI_Win_fence calls (a window of its own, made by the same constructor).
 * Each figure is checked: the target's memory (or the result) must hold what was sent.
 * With `halo_only` only the halo exchange runs (for rank counts above 2). */
#include <stdint.h>

#include "bench_mpi.h"

enum { kLargest = 4 << 20, kAccumulates = 64, kHaloBytes = 8 << 10 };

struct rma {
  MPI_Win win;
  char* origin;
  int bytes;
  int burst; /* operations per flush */
  int rank;
};

static void put_flush(void* context) {
  struct rma* r = context;
  if (r->rank != 0) return;
  for (int i = 0; i < r->burst; ++i) {
    MPI_Put(r->origin, r->bytes, MPI_BYTE, 1, 0, r->bytes, MPI_BYTE, r->win);
  }
  MPI_Win_flush(1, r->win);
}

static void get_flush(void* context) {
  struct rma* r = context;
  if (r->rank != 0) return;
  for (int i = 0; i < r->burst; ++i) {
    MPI_Get(r->origin, r->bytes, MPI_BYTE, 1, 0, r->bytes, MPI_BYTE, r->win);
  }
  MPI_Win_flush(1, r->win);
}

static void accumulate_flush(void* context) {
  struct rma* r = context;
  if (r->rank != 0) return;
  const int64_t one = 1;
  for (int i = 0; i < r->burst; ++i) {
    MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, r->win);
  }
  MPI_Win_flush(1, r->win);
}

static void fetch_and_op_flush(void* context) {
  struct rma* r = context;
  if (r->rank != 0) return;
  const int64_t one = 1;
  int64_t old = 0;
  MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, r->win);
  MPI_Win_flush(1, r->win);
}

/* A window of `bytes` by the named constructor; `memory` receives its base (to free with
 * free_window). */
static MPI_Win make_window(const char* flavor, long bytes, char** memory) {
  MPI_Win win;
  if (strcmp(flavor, "create") == 0) {
    *memory = bench_buffer(bytes, 0);
    MPI_Win_create(*memory, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  } else {
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, memory, &win);
    memset(*memory, 0, (size_t)bytes);
  }
  return win;
}

static void free_window(const char* flavor, MPI_Win* win, char* memory) {
  MPI_Win_free(win);
  if (strcmp(flavor, "create") == 0) free(memory);
}

static void report(const char* what, long bytes, double value, const char* unit) {
  char name[64];
  char size_name[32];
  bench_size_name(size_name, sizeof size_name, bytes);
  snprintf(name, sizeof name, "%s_%s", what, size_name);
  bench_result(name, value, unit);
}

/* Checks that the target's first and last byte of `bytes` hold `stamp` (rank 1 reads its own
 * window, after a barrier that follows rank 0's flush). */
static void check_target(struct rma* r, const char* memory, char stamp, const char* what) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (r->rank == 1) {
    MPI_Win_sync(r->win);
    if (memory[0] != stamp || memory[r->bytes - 1] != stamp) bench_fail(what, r->rank);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void point_to_point(const char* flavor, double seconds, int rank) {
  static const int kSizes[] = {8,        64,        512,     4 << 10, 16 << 10,
                               64 << 10, 256 << 10, 1 << 20, 4 << 20};
  char* memory = NULL;
  struct rma r = {MPI_WIN_NULL, bench_buffer(kLargest, 0), 0, 1, rank};
  r.win = make_window(flavor, kLargest, &memory);
  if (rank == 0) MPI_Win_lock_all(0, r.win);
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i) {
    r.bytes = kSizes[i];
    const char stamp = (char)('a' + i);
    /* Latency: one operation per flush. */
    r.burst = 1;
    if (rank == 0) memset(r.origin, stamp, (size_t)r.bytes);
    double t = bench_measure(MPI_COMM_WORLD, put_flush, &r, seconds);
    if (rank == 0) report("put_latency", r.bytes, t * 1e6, "us");
    check_target(&r, memory, stamp, "MPI_Put left wrong data at the target");
    if (rank == 1) memset(memory, stamp + 1, (size_t)r.bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    t = bench_measure(MPI_COMM_WORLD, get_flush, &r, seconds);
    if (rank == 0) {
      report("get_latency", r.bytes, t * 1e6, "us");
      if (r.origin[0] != stamp + 1 || r.origin[r.bytes - 1] != stamp + 1) {
        bench_fail("MPI_Get brought wrong data", rank);
      }
    }
    /* Bandwidth: a burst of operations per flush, up to 16 MiB and at most 64 of them. */
    r.burst = (16 << 20) / r.bytes;
    if (r.burst > 64) r.burst = 64;
    if (rank == 0) memset(r.origin, stamp, (size_t)r.bytes);
    t = bench_measure(MPI_COMM_WORLD, put_flush, &r, seconds);
    if (rank == 0) report("put_bandwidth", r.bytes, (double)r.bytes * r.burst / t / 1e6, "MB/s");
    check_target(&r, memory, stamp, "MPI_Put (bandwidth) left wrong data at the target");
    t = bench_measure(MPI_COMM_WORLD, get_flush, &r, seconds);
    if (rank == 0) report("get_bandwidth", r.bytes, (double)r.bytes * r.burst / t / 1e6, "MB/s");
  }

  /* Accumulates onto one int64 at the target's displacement 0, counted. */
  int64_t* counter = (int64_t*)memory;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    MPI_Win_sync(r.win);
    *counter = 0;
    MPI_Win_sync(r.win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  r.burst = kAccumulates;
  double t = bench_measure(MPI_COMM_WORLD, accumulate_flush, &r, seconds);
  if (rank == 0) bench_result("acc_rate", kAccumulates / t / 1e6, "Mops/s");
  t = bench_measure(MPI_COMM_WORLD, fetch_and_op_flush, &r, seconds);
  if (rank == 0) bench_result("fop_rate", 1.0 / t / 1e6, "Mops/s");
  /* Every accumulate and fetch-and-op added one: the count is a multiple of 1 only, but it must
   * be positive and the fetch-and-op must see it. */
  if (rank == 0) {
    int64_t zero = 0, seen = -1;
    MPI_Fetch_and_op(&zero, &seen, MPI_INT64_T, 1, 0, MPI_NO_OP, r.win);
    MPI_Win_flush(1, r.win);
    if (seen < kAccumulates) bench_fail("accumulates were lost at the target", rank);
    MPI_Win_unlock_all(r.win);
  }
  free_window(flavor, &r.win, memory);
  free(r.origin);
}

/* A ring of ranks, each with a row of kHaloBytes interior cells between two ghost faces. */
struct halo {
  MPI_Win win;
  char* cells; /* [left ghost | interior | right ghost], kHaloBytes each */
  int left, right;
};

static void halo_exchange(void* context) {
  struct halo* h = context;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, h->win);
  /* My first interior face is my left neighbour's right ghost, my last its mirror. */
  MPI_Put(h->cells + kHaloBytes, kHaloBytes, MPI_BYTE, h->left, 2 * kHaloBytes, kHaloBytes,
          MPI_BYTE, h->win);
  MPI_Put(h->cells + kHaloBytes, kHaloBytes, MPI_BYTE, h->right, 0, kHaloBytes, MPI_BYTE, h->win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, h->win);
}

static void halo(const char* flavor, double seconds, int rank, int size) {
  struct halo h = {MPI_WIN_NULL, NULL, (rank + size - 1) % size, (rank + 1) % size};
  h.win = make_window(flavor, 3 * kHaloBytes, &h.cells);
  memset(h.cells + kHaloBytes, 'A' + rank % 26, kHaloBytes);
  const double t = bench_measure(MPI_COMM_WORLD, halo_exchange, &h, seconds);
  if (h.cells[0] != 'A' + h.left % 26 || h.cells[3 * kHaloBytes - 1] != 'A' + h.right % 26) {
    bench_fail("the halo exchange left wrong ghost cells", rank);
  }
  if (rank == 0) report("halo", kHaloBytes, t * 1e6, "us");
  free_window(flavor, &h.win, h.cells);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) bench_fail("rma needs at least 2 ranks", rank);
  const double seconds = bench_seconds(argc, argv);
  const char* flavor = argc > 2 ? argv[2] : "allocate";
  if (strcmp(flavor, "allocate") != 0 && strcmp(flavor, "create") != 0) {
    bench_fail("the window flavor is allocate or create", rank);
  }
  const int halo_only = argc > 3 && strcmp(argv[3], "halo_only") == 0;
  if (!halo_only) point_to_point(flavor, seconds, rank);
  halo(flavor, seconds, rank, size);
  MPI_Finalize();
  return 0;
}
