/* How much of a nonblocking collective overlaps computation, for Ibarrier, Ibcast, Ireduce,
 * Iallreduce, Igather, Iscatter, Iallgather and Ialltoall, 8 B to 4 MiB per rank.
 *
 *   nbc_overlap [seconds per case] [sizes: "default" | "full" | bytes,bytes,...] [work]
 *
 * `work` is "calibrate" or the name of a file. "calibrate": each case only fits its compute count
 * (below) and prints it, `RESULT work_<coll>_<size> <count> rounds`, then the next case. A file:
 * lines `<coll> <size> <count>` (the size as in the RESULT names: 0B for Ibarrier), a fixed count
 * of compute rounds for each case it names: bench/mpi/nbc_run writes it from both MPI
 * implementations' calibrated counts (their max), so that both compute exactly as much. Each such
 * case also times t_fixed  the fixed compute alone; t_total  Icoll; the fixed compute; Wait: what
 * compute + collective cost together, comparable between implementations since the computation is
 * the same; printed as RESULT t_fixed_<coll>_<size> us and RESULT t_total_<coll>_<size> us.
 *
 * Per case three things are timed, each after a barrier:
 *   t_pure  Icoll; Wait, nothing between;
 *   t_CPU   the compute kernel alone: a fixed number of iterations of an arithmetic loop that
 *           touches no message buffer, calibrated once per case to take about t_pure (t_pure
 *           from warm-up iterations, the count from timed runs of the kernel; if the loop's t_CPU
 *           is still off t_pure by more than 2x, the count is set once more and the case
 *           measured again);
 *   t_ovrl  Icoll (t_call); the same compute (t_comp); Wait (t_wait). No MPI_Test in between: the
 *           collective has to progress by itself.
 * The three alternate inside one loop, so that a burst of load on a shared machine falls on all of
 * them. t_pure, t_CPU and t_ovrl are spans: from the earliest rank's start to the latest rank's
 * end on the host's clock, less the span of an empty part after the same barrier (t_skew: how far
 * apart the ranks leave it). With a core per rank that is the slowest rank's time, as IMB-NBC and
 * BenchNBC take it, without the barrier's skew, which their per-rank times count as overlap (it
 * is in t_pure and in t_CPU but only once in t_ovrl). With several ranks to a core it also counts
 * a rank waiting for its core: in a runtime whose ranks are user threads, a computing rank holds
 * its core and the next one starts after it, which a per-rank clock misses. t_call, t_comp,
 * t_wait and t_comp_ref (the compute alone, per rank) are the slowest rank's own times. Each is the
 * median over iterations. Printed per case, `<size>` being 0B for Ibarrier:
 *   RESULT overlap_<coll>_<size> %          IMB-NBC: 100 max(0, min(1, (t_pure + t_CPU - t_ovrl)
 *                                           / min(t_pure, t_CPU))); the divisor is the min (IMB's
 *                                           code divides by the max: perfect overlap would read
 *                                           min/max there when the two times differ)
 *   RESULT r_overhead_<coll>_<size> x       BenchNBC: (t_ovrl - max(t_CPU, t_pure)) /
 *                                           min(t_CPU, t_pure); 0 is perfect, 1 serialized
 *   RESULT r_comp_slowdown_<coll>_<size> x  t_comp / t_comp_ref: what the collective costs the
 *                                           computation (both the rank's own compute time)
 *   RESULT r_comm_<coll>_<size> x           (t_call + t_wait) / t_pure
 * and the times themselves in us (t_pure_, t_cpu_, t_ovrl_, t_call_, t_comp_, t_wait_,
 * t_comp_ref_, t_skew_...). Every collective's answer is checked before and after it is timed. */
#include <time.h>

#include "bench_mpi.h"

enum collective {
  kIbarrier,
  kIbcast,
  kIreduce,
  kIallreduce,
  kIgather,
  kIscatter,
  kIallgather,
  kIalltoall,
  kCollectives
};
static const char* const kNames[kCollectives] = {"ibarrier", "ibcast",   "ireduce",    "iallreduce",
                                                 "igather",  "iscatter", "iallgather", "ialltoall"};

/* What each rank keeps per iteration, one array each: the begin (negated, so that one MPI_MAX
 * reduction gives the earliest) and end of each timed part, and the rank's own durations. */
enum slots {
  kEmptyBegin,
  kEmptyEnd,
  kPureBegin,
  kPureEnd,
  kCpuBegin,
  kCpuEnd,
  kOverlappedBegin,
  kOverlappedEnd,
  kCall,
  kComp,
  kWait,
  kCompRef,
  kFixedBegin,
  kFixedEnd,
  kTotalBegin,
  kTotalEnd,
  kSlots
};
/* The figures made of them, medians over iterations. */
enum figures {
  kPure,
  kCpu,
  kOverlapped,
  kCallTime,
  kCompTime,
  kWaitTime,
  kCompRefTime,
  kSkew,
  kFixed,
  kTotal,
  kFigures
};

enum { kMinIterations = 5, kMaxIterations = 99, kMaxSizes = 32 };

/* The compute kernel's result goes here, so that the compiler cannot drop the loop. */
static volatile double compute_sink;

/* A fixed amount of work: `iterations` rounds of four independent multiply-add chains, in
 * registers only (it must not compete with the collective for the message buffers or the memory
 * bus, which would measure the machine rather than the progress engine). */
static void compute(long iterations) {
  double a = 1.0, b = 2.0, c = 3.0, d = 4.0;
  for (long i = 0; i < iterations; ++i) {
    a = a * 0.9999999 + 1e-7;
    b = b * 0.9999998 + 2e-7;
    c = c * 0.9999997 + 3e-7;
    d = d * 0.9999996 + 4e-7;
  }
  compute_sink = a + b + c + d;
}

struct nbc_case {
  enum collective which;
  long bytes; /* per rank: the block each rank contributes or receives */
  int rank;
  int size;
  char* send;
  char* receive;
};

/* The byte rank `from` sends to rank `to` at offset `i` of its block: offsets matter, so a block
 * shifted or truncated is caught. */
static char pattern(int from, int to, long i) {
  return (char)((from * 31 + to * 7 + i * 13 + 1) & 0x7f);
}

/* Reductions add doubles that are small integers, so the sum is exact whatever the order. */
static double reduce_input(int rank, long i) {
  return (double)(rank + 1 + i % 7);
}

static void fill_blocks(char* buffer, int blocks, long bytes, int from, int to_is_block) {
  for (int block = 0; block < blocks; ++block) {
    char* b = buffer + (long)block * bytes;
    for (long i = 0; i < bytes; ++i) b[i] = pattern(from, to_is_block ? block : 0, i);
  }
}

static int root_only(const struct nbc_case* c) {
  return c->rank == 0;
}

/* Sets the inputs and clears the outputs, so that a check sees only what the collective wrote. */
static void prepare(struct nbc_case* c) {
  const long n = c->size, bytes = c->bytes;
  switch (c->which) {
    case kIbarrier:
      break;
    case kIbcast:
      if (root_only(c))
        fill_blocks(c->send, 1, bytes, 0, 0);
      else
        memset(c->send, 0, (size_t)bytes);
      break;
    case kIreduce:
    case kIallreduce: {
      double* values = (double*)c->send;
      for (long i = 0; i < bytes / 8; ++i) values[i] = reduce_input(c->rank, i);
      memset(c->receive, 0, (size_t)bytes);
      break;
    }
    case kIgather:
    case kIallgather:
      fill_blocks(c->send, 1, bytes, c->rank, 0);
      if (c->which == kIallgather || root_only(c)) memset(c->receive, 0, (size_t)(n * bytes));
      break;
    case kIscatter:
      if (root_only(c)) fill_blocks(c->send, c->size, bytes, 0, 1);
      memset(c->receive, 0, (size_t)bytes);
      break;
    case kIalltoall:
      fill_blocks(c->send, c->size, bytes, c->rank, 1);
      memset(c->receive, 0, (size_t)(n * bytes));
      break;
    case kCollectives:
      break;
  }
}

/* 0 when `blocks` blocks of `buffer` hold what rank `from` (or block index, when from < 0) sent
 * to `to` (or to block index, when to < 0). */
static int blocks_wrong(const char* buffer, int blocks, long bytes, int from, int to) {
  for (int block = 0; block < blocks; ++block) {
    const char* b = buffer + (long)block * bytes;
    const int f = from < 0 ? block : from, t = to < 0 ? block : to;
    for (long i = 0; i < bytes; ++i) {
      if (b[i] != pattern(f, t, i)) return 1;
    }
  }
  return 0;
}

static void verify(const struct nbc_case* c) {
  int wrong = 0;
  switch (c->which) {
    case kIbarrier:
      break;
    case kIbcast:
      wrong = blocks_wrong(c->send, 1, c->bytes, 0, 0);
      break;
    case kIreduce:
    case kIallreduce:
      if (c->which == kIallreduce || root_only(c)) {
        const double* sums = (const double*)c->receive;
        const double n = c->size;
        for (long i = 0; i < c->bytes / 8 && !wrong; ++i) {
          wrong = sums[i] != n * (n + 1) / 2 + n * (double)(i % 7);
        }
      }
      break;
    case kIgather:
    case kIallgather:
      if (c->which == kIallgather || root_only(c)) {
        wrong = blocks_wrong(c->receive, c->size, c->bytes, -1, 0);
      }
      break;
    case kIscatter:
      wrong = blocks_wrong(c->receive, 1, c->bytes, 0, c->rank);
      break;
    case kIalltoall:
      wrong = blocks_wrong(c->receive, c->size, c->bytes, -1, c->rank);
      break;
    case kCollectives:
      break;
  }
  if (wrong) {
    char what[96];
    snprintf(what, sizeof what, "%s of %ld bytes per rank: wrong result", kNames[c->which],
             c->bytes);
    bench_fail(what, c->rank);
  }
}

static void start(struct nbc_case* c, MPI_Request* request) {
  const int count = (int)c->bytes;
  MPI_Comm comm = MPI_COMM_WORLD;
  switch (c->which) {
    case kIbarrier:
      MPI_Ibarrier(comm, request);
      break;
    case kIbcast:
      MPI_Ibcast(c->send, count, MPI_BYTE, 0, comm, request);
      break;
    case kIreduce:
      MPI_Ireduce(c->send, c->receive, count / 8, MPI_DOUBLE, MPI_SUM, 0, comm, request);
      break;
    case kIallreduce:
      MPI_Iallreduce(c->send, c->receive, count / 8, MPI_DOUBLE, MPI_SUM, comm, request);
      break;
    case kIgather:
      MPI_Igather(c->send, count, MPI_BYTE, c->receive, count, MPI_BYTE, 0, comm, request);
      break;
    case kIscatter:
      MPI_Iscatter(c->send, count, MPI_BYTE, c->receive, count, MPI_BYTE, 0, comm, request);
      break;
    case kIallgather:
      MPI_Iallgather(c->send, count, MPI_BYTE, c->receive, count, MPI_BYTE, comm, request);
      break;
    case kIalltoall:
      MPI_Ialltoall(c->send, count, MPI_BYTE, c->receive, count, MPI_BYTE, comm, request);
      break;
    case kCollectives:
      break;
  }
}

/* The buffers a case needs on this rank: whole blocks for every rank only where the rank sends
 * or receives one per rank. */
static void allocate(struct nbc_case* c) {
  const long all = (long)c->size * c->bytes;
  long send = c->bytes, receive = c->bytes;
  switch (c->which) {
    case kIbarrier:
      send = receive = 0;
      break;
    case kIbcast:
      receive = 0;
      break;
    case kIgather:
      receive = root_only(c) ? all : 0;
      break;
    case kIscatter:
      send = root_only(c) ? all : 0;
      break;
    case kIallgather:
      receive = all;
      break;
    case kIalltoall:
      send = receive = all;
      break;
    default:
      break;
  }
  c->send = bench_buffer(send, 0);
  c->receive = bench_buffer(receive, 0);
}

/* One overlapped iteration, untimed, followed by the check of its answer. */
static void checked_run(struct nbc_case* c, long work) {
  MPI_Request request;
  prepare(c);
  MPI_Barrier(MPI_COMM_WORLD);
  start(c, &request);
  compute(work);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  verify(c);
}

static double slowest(double seconds) {
  double max = 0.0;
  MPI_Allreduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

/* Seconds on a clock all ranks of the host read alike (MPI_Wtime need not be: Open MPI's counts
 * from each process's start), from a whole second rank 0 chose, to keep the nanoseconds. */
static long long clock_origin;

static double now(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)((long long)t.tv_sec - clock_origin) + 1e-9 * (double)t.tv_nsec;
}

static void agree_on_clock(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  clock_origin = (long long)t.tv_sec;
  MPI_Bcast(&clock_origin, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
}

/* From the earliest rank's `begin` to the latest rank's `end`, the same on every rank. With a
 * core per rank that is the slowest rank's own time; with several ranks per core it also counts
 * the time a rank waited for its core before it could begin. */
static double span(double begin, double end) {
  double mine[2] = {-begin, end}, all[2];
  MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all[0] + all[1];
}

static double median(double* values, int count) {
  qsort(values, (size_t)count, sizeof values[0], bench_compare_doubles);
  return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2.0;
}

/* Seconds per round of the compute kernel, the slowest rank's own time with every rank
 * computing at once: median of 5 runs of at least a millisecond each. Only a first guess for
 * calibrate(). */
static double compute_seconds_per_round(void) {
  long rounds = 1000;
  for (;;) {
    MPI_Barrier(MPI_COMM_WORLD);
    double begin = now();
    compute(rounds);
    if (slowest(now() - begin) >= 1e-3 || rounds >= (1L << 40)) break;
    rounds *= 2;
  }
  double runs[5];
  for (int i = 0; i < 5; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double begin = now();
    compute(rounds);
    runs[i] = slowest(now() - begin) / (double)rounds;
  }
  return median(runs, 5);
}

/* The span of nothing after a barrier: how far apart the ranks leave it (ranks woken one after
 * the other, several to a core, can take longer than a small collective). Every span after a
 * barrier holds it once: it is subtracted from each, or t_pure + t_CPU would count it twice and
 * t_ovrl once, and a collective that does not overlap at all would seem to. */
static double empty_span(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  return span(t0, now());
}

/* t_pure and the barrier's skew from warm-up iterations (the first is dropped: first touches,
 * connections), for calibrating the compute: at least 2 of them, more while `budget` seconds are
 * not spent. */
static double estimate_pure(struct nbc_case* c, double budget, double* skew) {
  double pure[21], empty[21];
  int count = 0;
  const double begin = now();
  while (count < 21 && (count < 3 || slowest(now() - begin) < budget)) {
    empty[count] = empty_span();
    MPI_Request request;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    start(c, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    pure[count++] = span(t0, now());
  }
  *skew = median(empty + 1, count - 1);
  return median(pure + 1, count - 1) - *skew;
}

/* Times rounds of nothing, pure, CPU and overlapped, and with `fixed_work` > 0 the fixed compute
 * alone and with the collective, each after a barrier, into slots[slot][iteration] until
 * `budget` seconds are spent: at least kMinIterations, at most kMaxIterations, an odd number (a
 * middle value). Returns how many. */
static int measure(struct nbc_case* c, long work, long fixed_work, double budget,
                   double slots[][kMaxIterations]) {
  const double begin = now();
  for (int i = 0;; ++i) {
    /* The largest time spent on any rank: the same decision everywhere. */
    const double spent = slowest(now() - begin);
    if (i == kMaxIterations || (i >= kMinIterations && i % 2 == 1 && spent >= budget)) return i;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    slots[kEmptyBegin][i] = -t0;
    slots[kEmptyEnd][i] = now();

    MPI_Request request;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    start(c, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    slots[kPureBegin][i] = -t0;
    slots[kPureEnd][i] = now();

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    compute(work);
    double t1 = now();
    slots[kCpuBegin][i] = -t0;
    slots[kCpuEnd][i] = t1;
    slots[kCompRef][i] = t1 - t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    start(c, &request);
    t1 = now();
    compute(work);
    double t2 = now();
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    double t3 = now();
    slots[kOverlappedBegin][i] = -t0;
    slots[kOverlappedEnd][i] = t3;
    slots[kCall][i] = t1 - t0;
    slots[kComp][i] = t2 - t1;
    slots[kWait][i] = t3 - t2;
    if (fixed_work <= 0) continue;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    compute(fixed_work);
    slots[kFixedBegin][i] = -t0;
    slots[kFixedEnd][i] = now();

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    start(c, &request);
    compute(fixed_work);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    slots[kTotalBegin][i] = -t0;
    slots[kTotalEnd][i] = now();
  }
}

static void report(const char* metric, const char* collective, const char* size, double value,
                   const char* unit) {
  char name[96];
  snprintf(name, sizeof name, "%s_%s_%s", metric, collective, size);
  bench_result(name, value, unit);
}

static double at_least(double value) {
  return value > 1e-9 ? value : 1e-9;
}

/* `work` scaled by 1 / `ratio`, by 1/16 to 16 at most: one noisy timing (a difference of two
 * spans can come out near zero) must not turn the computation into hours. */
static long corrected(long work, double ratio) {
  double factor = 1.0 / at_least(ratio);
  factor = factor < 1.0 / 16 ? 1.0 / 16 : factor > 16.0 ? 16.0 : factor;
  const long result = (long)((double)work * factor + 0.5);
  return result < 1 ? 1 : result;
}

/* The fixed amount of work for a case: the count of compute rounds that takes `target` seconds
 * on the slowest rank with every rank computing at once, the same on every rank (all derive it
 * from the same values). Starts from the kernel's rate and corrects it up to 3 times: with more
 * ranks than cores a long computation is shared out by the kernel's scheduler, a short one not. */
static long calibrate(double target, double seconds_per_round, double skew) {
  target = at_least(target);
  long work = (long)(target / seconds_per_round + 0.5);
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (work < 1) work = 1;
    /* The median of three spans: on a loaded machine one of them can be a time slice of another
     * process, which would cut the count by 16. */
    double spans[3];
    for (int run = 0; run < 3; ++run) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double begin = now();
      compute(work);
      spans[run] = span(begin, now());
    }
    const double ratio = at_least(median(spans, 3) - skew) / target;
    if (ratio > 0.8 && ratio < 1.25) break;
    work = corrected(work, ratio);
  }
  return work < 1 ? 1 : work;
}

/* What a run does with each case's compute count (the program's third argument). */
struct work_plan {
  int calibrate_only; /* fit the count, print it, measure nothing */
  const char* file;   /* fixed counts, or NULL */
};

/* The fixed count of compute rounds `plan`'s file gives the case, 0 when none: every rank reads
 * the same file, so all agree. */
static long fixed_work_for(const struct work_plan* plan, enum collective which,
                           const char* size_name, int rank) {
  if (plan->file == NULL) return 0;
  FILE* file = fopen(plan->file, "r");
  if (file == NULL) bench_fail("work file: cannot open it", rank);
  char name[32], size[32];
  long rounds = 0, found = 0;
  while (fscanf(file, "%31s %31s %ld", name, size, &rounds) == 3) {
    if (strcmp(name, kNames[which]) == 0 && strcmp(size, size_name) == 0) found = rounds;
  }
  fclose(file);
  return found;
}

static void run_case(enum collective which, long bytes, int rank, int size, double seconds,
                     double compute_rate, const struct work_plan* plan) {
  const double case_start = now();
  struct nbc_case c = {which, bytes, rank, size, NULL, NULL};
  allocate(&c);
  checked_run(&c, 0);

  char size_name[32];
  bench_size_name(size_name, sizeof size_name, which == kIbarrier ? 0 : bytes);
  const char* name = kNames[which];
  double skew = 0.0;
  if (plan->calibrate_only) {
    /* The whole budget for the estimate, and spans with their skew: a skew that is most of a
     * short span (ranks waiting for a core) would leave a difference of noise, and a count of
     * a few rounds. A little more computation than t_pure only helps the fixed count hide the
     * collective. */
    const double pure_span = estimate_pure(&c, seconds, &skew) + skew;
    const long fitted = calibrate(pure_span, compute_rate, 0.0);
    if (rank == 0) report("work", name, size_name, (double)fitted, "rounds");
    free(c.send);
    free(c.receive);
    return;
  }
  const double pure_estimate = estimate_pure(&c, seconds * 0.2, &skew);
  long work = calibrate(pure_estimate, compute_rate, skew);
  const long fixed_work = fixed_work_for(plan, which, size_name, rank);

  double slots[kSlots][kMaxIterations] = {{0.0}}, all[kSlots][kMaxIterations];
  double m[kFigures];
  int iterations = 0;
  for (int attempt = 0;; ++attempt) {
    iterations = measure(&c, work, fixed_work, seconds * 0.8, slots);
    /* Every slot of every iteration over all ranks in one reduction; every rank then holds the
     * same medians, so that the decision below is the same everywhere. */
    MPI_Allreduce(slots, all, kSlots * kMaxIterations, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double figure[kFigures][kMaxIterations];
    for (int i = 0; i < iterations; ++i) {
      figure[kPure][i] = all[kPureBegin][i] + all[kPureEnd][i];
      figure[kCpu][i] = all[kCpuBegin][i] + all[kCpuEnd][i];
      figure[kOverlapped][i] = all[kOverlappedBegin][i] + all[kOverlappedEnd][i];
      figure[kCallTime][i] = all[kCall][i];
      figure[kCompTime][i] = all[kComp][i];
      figure[kWaitTime][i] = all[kWait][i];
      figure[kCompRefTime][i] = all[kCompRef][i];
      figure[kSkew][i] = all[kEmptyBegin][i] + all[kEmptyEnd][i];
      figure[kFixed][i] = all[kFixedBegin][i] + all[kFixedEnd][i];
      figure[kTotal][i] = all[kTotalBegin][i] + all[kTotalEnd][i];
    }
    for (int f = 0; f < kFigures; ++f) m[f] = median(figure[f], iterations);
    /* Less the skew, but no less than a tenth of the span: where the skew is most of it (ranks
     * of several processes to a core, descheduled for a time slice) the difference is noise,
     * and a near-zero divisor would turn it into absurd ratios. */
    for (int f = kPure; f <= kTotal; ++f) {
      if (f > kOverlapped && f < kFixed) continue;
      m[f] = at_least(m[f] - m[kSkew] > 0.1 * m[f] ? m[f] - m[kSkew] : 0.1 * m[f]);
    }
    /* A burst of load during the warm-up or the calibration can put the count far off t_pure:
     * then the count is set once more from this loop's medians and the loop measured again. */
    const double ratio = m[kCpu] / at_least(m[kPure]);
    if (attempt > 0 || (ratio >= 0.5 && ratio <= 2.0)) break;
    work = corrected(work, ratio);
    if (rank == 0) printf("# count recalibrated: t_CPU was %.3g t_pure\n", ratio);
  }
  checked_run(&c, work);

  if (rank == 0) {
    const double pure = m[kPure], cpu = m[kCpu], overlapped = m[kOverlapped];
    const double smaller = at_least(pure < cpu ? pure : cpu);
    const double larger = pure > cpu ? pure : cpu;
    double overlap = (pure + cpu - overlapped) / smaller;
    overlap = overlap < 1e-6 ? 0.0 : overlap > 1.0 ? 1.0 : overlap; /* below 1e-4 %: rounding */

    report("overlap", name, size_name, 100.0 * overlap, "%");
    report("r_overhead", name, size_name, (overlapped - larger) / smaller, "x");
    report("r_comp_slowdown", name, size_name, m[kCompTime] / at_least(m[kCompRefTime]), "x");
    report("r_comm", name, size_name, (m[kCallTime] + m[kWaitTime]) / at_least(pure), "x");
    static const char* const kFigureNames[kFigures] = {"t_pure",  "t_cpu",  "t_ovrl",     "t_call",
                                                       "t_comp",  "t_wait", "t_comp_ref", "t_skew",
                                                       "t_fixed", "t_total"};
    const int figures = fixed_work > 0 ? kFigures : kFixed;
    for (int f = 0; f < figures; ++f) report(kFigureNames[f], name, size_name, m[f] * 1e6, "us");
    printf("# %s %s: %d iterations, compute %ld rounds, fixed compute %ld rounds, %.2f s\n", name,
           size_name, iterations, work, fixed_work, now() - case_start);
  }
  free(c.send);
  free(c.receive);
}

/* The sizes asked: "default" (8 B, 1 KiB, 64 KiB, 1 MiB, 4 MiB), "full" (8 B, then the powers of
 * 4 from 16 B to 4 MiB) or a comma-separated list of byte counts, multiples of 8 (the reductions
 * add doubles). Returns how many. */
static int parse_sizes(const char* spec, long* sizes, int rank) {
  int count = 0;
  if (spec == NULL || strcmp(spec, "default") == 0) {
    static const long kDefault[] = {8, 1L << 10, 64L << 10, 1L << 20, 4L << 20};
    for (; count < 5; ++count) sizes[count] = kDefault[count];
  } else if (strcmp(spec, "full") == 0) {
    sizes[count++] = 8;
    for (long bytes = 16; bytes <= (4L << 20); bytes *= 4) sizes[count++] = bytes;
  } else {
    for (const char* p = spec; *p != '\0' && count < kMaxSizes;) {
      char* end = NULL;
      long bytes = strtol(p, &end, 10);
      if (end == p || bytes < 8 || bytes % 8 != 0 || bytes > (1L << 30)) {
        bench_fail("sizes: default, full or byte counts (multiples of 8) separated by commas",
                   rank);
      }
      sizes[count++] = bytes;
      p = *end == ',' ? end + 1 : end;
    }
  }
  return count;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double seconds = bench_seconds(argc, argv);
  long sizes[kMaxSizes];
  const int size_count = parse_sizes(argc > 2 ? argv[2] : NULL, sizes, rank);
  struct work_plan plan = {0, NULL};
  if (argc > 3) {
    if (strcmp(argv[3], "calibrate") == 0) {
      plan.calibrate_only = 1;
    } else {
      plan.file = argv[3];
    }
  }

  agree_on_clock();
  const double compute_rate = compute_seconds_per_round();
  if (rank == 0) {
    printf(
        "# %d ranks; compute kernel %.3g ns per round; overlap divides by min(t_pure, t_CPU)"
        " (IMB's code: max)\n",
        size, compute_rate * 1e9);
  }
  run_case(kIbarrier, 0, rank, size, seconds, compute_rate, &plan);
  for (int which = kIbcast; which < kCollectives; ++which) {
    for (int s = 0; s < size_count; ++s) {
      run_case((enum collective)which, sizes[s], rank, size, seconds, compute_rate, &plan);
    }
  }
  MPI_Finalize();
  return 0;
}
