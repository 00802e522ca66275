// LLVM's ABI for worksharing loops: static schedules computed in place
// (__kmpc_for_static_init_*), the others through the core's worksharing slots
// (__kmpc_dispatch_*), and doacross nests (__kmpc_doacross_*). Bounds are inclusive; each entry
// point comes in four iteration types (4, 4u, 8, 8u), one template each.
#include <algorithm>
#include <string>
#include <type_traits>

#include "kmp_thread.h"
#include "loop.h"
#include "team.h"
#include "weft/error.h"

namespace weft::omp {

using namespace kmp;
using weft::fatal;

namespace {

// A schedule without its monotonic/nonmonotonic modifiers, "nomerge" kinds as the plain ones.
kmp_int32 plain_kind(kmp_int32 schedule) {
  kmp_int32 kind = schedule & ~sched::kModifiers;
  if (kind >= sched::kNoMergeLower) kind -= sched::kNoMergeLower - 32;
  return kind;
}

// The number of iterations of lower..upper (inclusive) by incr, in 64 bits.
template <class T, class ST>
std::uint64_t trip_count(T lower, T upper, ST incr) {
  using U = std::make_unsigned_t<T>;
  if (incr == 0) fatal("a worksharing loop with a zero increment");
  if (incr > 0) {
    if (upper < lower) return 0;
    return static_cast<std::uint64_t>(static_cast<U>(upper - lower)) /
               static_cast<std::uint64_t>(static_cast<U>(incr)) +
           1;
  }
  if (lower < upper) return 0;
  return static_cast<std::uint64_t>(static_cast<U>(lower - upper)) /
             static_cast<std::uint64_t>(static_cast<U>(-static_cast<std::int64_t>(incr))) +
         1;
}

// lower + n * incr, modulo the type's width.
template <class T, class ST>
T advance(T lower, std::uint64_t n, ST incr) {
  return static_cast<T>(static_cast<std::uint64_t>(lower) +
                        n * static_cast<std::uint64_t>(static_cast<std::int64_t>(incr)));
}

template <class T, class ST>
void for_static_init(kmp_int32 schedule, kmp_int32* plastiter, T* plower, T* pupper, ST* pstride,
                     ST incr, ST chunk) {
  ThreadState& state = self();
  const kmp_int32 kind = plain_kind(schedule);
  const bool distribute =
      kind == sched::kDistributeStatic || kind == sched::kDistributeStaticChunked;
  // distribute shares the loop among the teams of the league, the others among the team.
  const auto tid = static_cast<std::uint64_t>(distribute ? state.league_num : state.num());
  const auto nth = static_cast<std::uint64_t>(distribute ? state.league_size : state.team().size);
  const std::uint64_t trip = trip_count(*plower, *pupper, incr);
  kmp_int32 last = 0;
  if (trip == 0) {
    *pstride = incr;
  } else if (nth == 1) {
    last = 1;
    *pstride = static_cast<ST>(advance(*pupper, 1, incr) - *plower);
  } else if (kind == sched::kStaticChunked || kind == sched::kDistributeStaticChunked) {
    const auto size = static_cast<std::uint64_t>(std::max<ST>(1, chunk));
    const T first = advance(*plower, tid * size, incr);
    *plower = first;
    *pupper = advance(first, size - 1, incr);
    *pstride =
        static_cast<ST>(static_cast<std::uint64_t>(static_cast<std::int64_t>(incr)) * size * nth);
    last = ((trip - 1) / size) % nth == tid ? 1 : 0;
  } else if (kind == sched::kStaticBalancedChunked) {
    // schedule(simd:static): equal shares rounded up to a multiple of the chunk (the SIMD width).
    const auto size = static_cast<std::uint64_t>(std::max<ST>(1, chunk));
    std::uint64_t span = (trip + nth - 1) / nth;
    span = (span + size - 1) / size * size;
    const std::uint64_t begin = std::min(trip, tid * span);
    const std::uint64_t end = std::min(trip, begin + span);
    const T origin = *plower;
    *plower = advance(origin, begin, incr);
    *pupper = begin < end ? advance(origin, end - 1, incr) : advance(*plower, 0, incr) - 1;
    if (begin >= end) *plower = advance(*pupper, 1, incr);
    *pstride = static_cast<ST>(advance(origin, trip, incr) - origin);
    last = begin < end && end == trip ? 1 : 0;
  } else {
    // Unchunked static (and every other kind asked of this entry point): equal shares, the first
    // trip % nth threads one iteration more, as libomp's balanced schedule gives them.
    const T origin = *plower;
    if (trip < nth) {
      if (tid < trip) {
        *plower = *pupper = advance(origin, tid, incr);
      } else {
        *plower = advance(*pupper, 1, incr);
      }
      last = tid == trip - 1 ? 1 : 0;
    } else {
      const std::uint64_t share = trip / nth;
      const std::uint64_t extra = trip % nth;
      const std::uint64_t begin = tid * share + std::min(tid, extra);
      *plower = advance(origin, begin, incr);
      *pupper = advance(*plower, share - (tid < extra ? 0 : 1), incr);
      last = tid == nth - 1 ? 1 : 0;
    }
    *pstride = static_cast<ST>(advance(origin, trip, incr) - origin);
  }
  if (plastiter != nullptr) *plastiter = last;
}

// The core's schedule for a dispatch kind; `ordered` is set for the ordered kinds.
LoopSchedule dispatch_schedule(kmp_int32 schedule, long chunk, bool* ordered) {
  kmp_int32 kind = plain_kind(schedule);
  *ordered = kind > sched::kOrderedLower && kind < sched::kOrderedUpper;
  if (*ordered) kind -= 32;
  switch (kind) {
    case sched::kStaticChunked:
    case sched::kDistributeStaticChunked:
      return fixed_schedule(ScheduleKind::static_, chunk);
    case sched::kStaticBalancedChunked: {
      LoopSchedule schedule = fixed_schedule(ScheduleKind::static_, 0);
      schedule.simd_width = chunk;
      return schedule;
    }
    case sched::kStatic:
    case sched::kStaticGreedy:
    case sched::kStaticBalanced:
    case sched::kDistributeStatic:
    case sched::kAuto:
      return fixed_schedule(ScheduleKind::static_, 0);
    // static_steal is libomp's way of running a nonmonotonic dynamic schedule.
    case sched::kDynamicChunked:
    case sched::kStaticSteal:
      return fixed_schedule(ScheduleKind::dynamic, chunk);
    case sched::kGuidedSimd: {
      LoopSchedule schedule = fixed_schedule(ScheduleKind::guided, chunk);
      schedule.simd_width = chunk;
      return schedule;
    }
    case sched::kGuidedChunked:
    case sched::kGuidedIterative:
    case sched::kGuidedAnalytical:
    case sched::kTrapezoidal:
      return fixed_schedule(ScheduleKind::guided, chunk);
    case sched::kRuntime:
      return kRuntimeSchedule;
    // The compiler passes the SIMD width as the chunk.
    case sched::kRuntimeSimd: {
      LoopSchedule schedule = kRuntimeSchedule;
      schedule.simd_width = chunk;
      return schedule;
    }
    default:
      fatal("__kmpc_dispatch_init: unknown schedule " + std::to_string(schedule));
  }
}

template <class T, class ST>
void dispatch_init(kmp_int32 schedule, T lb, T ub, ST st, ST chunk) {
  bool ordered = false;
  const LoopSchedule kind = dispatch_schedule(schedule, static_cast<long>(chunk), &ordered);
  IterationSpace space;
  space.start = static_cast<std::uint64_t>(lb);
  space.incr = static_cast<std::uint64_t>(static_cast<std::int64_t>(st));
  space.count = trip_count(lb, ub, st);
  loop_start(self(), space, kind, ordered, nullptr, nullptr);
}

// The caller's next chunk, as inclusive bounds; when none is left it leaves the loop (the
// compiler calls nothing after the last __kmpc_dispatch_next but a barrier).
template <class T, class ST>
kmp_int32 dispatch_next(kmp_int32* plast, T* plb, T* pub, ST* pst) {
  ThreadState& state = self();
  LoopCursor& cursor = state.context.loop;
  if (cursor.ws == nullptr) fatal("__kmpc_dispatch_next: the thread is in no dispatched loop");
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  if (!loop_next(state, &lo, &hi)) {
    loop_end(state, false);
    return 0;
  }
  const IterationSpace& space = cursor.ws->space;
  *plb = static_cast<T>(space.at(lo));
  *pub = static_cast<T>(space.at(hi - 1));
  if (pst != nullptr) *pst = static_cast<ST>(space.incr);
  if (plast != nullptr) *plast = hi == space.count ? 1 : 0;
  return 1;
}

// A doacross iteration vector's position along loop `d`; false when it lies outside the loop.
bool normalized(const kmp_dim& dim, kmp_int64 value, std::uint64_t* index) {
  if (dim.st > 0 ? (value < dim.lo || value > dim.up) : (value > dim.lo || value < dim.up)) {
    return false;
  }
  *index = dim.st > 0
               ? static_cast<std::uint64_t>(value - dim.lo) / static_cast<std::uint64_t>(dim.st)
               : static_cast<std::uint64_t>(dim.lo - value) / static_cast<std::uint64_t>(-dim.st);
  return true;
}

// The outer iteration of `vec` and 1 + the flattened index of its inner iterations; false when
// the vector lies outside the nest (a sink there is ignored, as OpenMP asks).
bool doacross_position(const KmpThread& kmp, const kmp_int64* vec, std::uint64_t* outer,
                       std::uint64_t* inner) {
  const WorkShare& ws = *kmp.doacross;
  *inner = 0;
  for (std::size_t d = 0; d < kmp.doacross_dims.size(); ++d) {
    std::uint64_t index = 0;
    if (!normalized(kmp.doacross_dims[d], vec[d], &index)) return false;
    if (d == 0) {
      *outer = index;
    } else {
      *inner = *inner * ws.doacross_counts[d] + index;
    }
  }
  *inner += 1;
  return true;
}

KmpThread& in_doacross(ThreadState& state, const char* call) {
  KmpThread& kmp = kmp_thread(state);
  if (kmp.doacross == nullptr) fatal(std::string(call) + ": the thread is in no doacross loop");
  return kmp;
}

}  // namespace
}  // namespace weft::omp

using namespace weft::omp;
using namespace weft::omp::kmp;

extern "C" {

void __kmpc_for_static_init_4(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 schedule,
                              kmp_int32* plastiter, kmp_int32* plower, kmp_int32* pupper,
                              kmp_int32* pstride, kmp_int32 incr, kmp_int32 chunk) {
  for_static_init(schedule, plastiter, plower, pupper, pstride, incr, chunk);
}
void __kmpc_for_static_init_4u(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 schedule,
                               kmp_int32* plastiter, kmp_uint32* plower, kmp_uint32* pupper,
                               kmp_int32* pstride, kmp_int32 incr, kmp_int32 chunk) {
  for_static_init(schedule, plastiter, plower, pupper, pstride, incr, chunk);
}
void __kmpc_for_static_init_8(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 schedule,
                              kmp_int32* plastiter, kmp_int64* plower, kmp_int64* pupper,
                              kmp_int64* pstride, kmp_int64 incr, kmp_int64 chunk) {
  for_static_init(schedule, plastiter, plower, pupper, pstride, incr, chunk);
}
void __kmpc_for_static_init_8u(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 schedule,
                               kmp_int32* plastiter, kmp_uint64* plower, kmp_uint64* pupper,
                               kmp_int64* pstride, kmp_int64 incr, kmp_int64 chunk) {
  for_static_init(schedule, plastiter, plower, pupper, pstride, incr, chunk);
}
// Nothing to end: a static loop shares no state between its threads.
void __kmpc_for_static_fini(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}

void __kmpc_dispatch_init_4(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 schedule, kmp_int32 lb,
                            kmp_int32 ub, kmp_int32 st, kmp_int32 chunk) {
  dispatch_init(schedule, lb, ub, st, chunk);
}
void __kmpc_dispatch_init_4u(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 schedule,
                             kmp_uint32 lb, kmp_uint32 ub, kmp_int32 st, kmp_int32 chunk) {
  dispatch_init(schedule, lb, ub, st, chunk);
}
void __kmpc_dispatch_init_8(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 schedule, kmp_int64 lb,
                            kmp_int64 ub, kmp_int64 st, kmp_int64 chunk) {
  dispatch_init(schedule, lb, ub, st, chunk);
}
void __kmpc_dispatch_init_8u(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 schedule,
                             kmp_uint64 lb, kmp_uint64 ub, kmp_int64 st, kmp_int64 chunk) {
  dispatch_init(schedule, lb, ub, st, chunk);
}
kmp_int32 __kmpc_dispatch_next_4(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32* plast,
                                 kmp_int32* plb, kmp_int32* pub, kmp_int32* pst) {
  return dispatch_next(plast, plb, pub, pst);
}
kmp_int32 __kmpc_dispatch_next_4u(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32* plast,
                                  kmp_uint32* plb, kmp_uint32* pub, kmp_int32* pst) {
  return dispatch_next(plast, plb, pub, pst);
}
kmp_int32 __kmpc_dispatch_next_8(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32* plast,
                                 kmp_int64* plb, kmp_int64* pub, kmp_int64* pst) {
  return dispatch_next(plast, plb, pub, pst);
}
kmp_int32 __kmpc_dispatch_next_8u(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32* plast,
                                  kmp_uint64* plb, kmp_uint64* pub, kmp_int64* pst) {
  return dispatch_next(plast, plb, pub, pst);
}
// The end of an iteration of an ordered loop: the ordered turn passes per chunk (loop.h), when
// the next __kmpc_dispatch_next is called.
void __kmpc_dispatch_fini_4(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}
void __kmpc_dispatch_fini_4u(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}
void __kmpc_dispatch_fini_8(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}
void __kmpc_dispatch_fini_8u(ident_t* /*loc*/, kmp_int32 /*gtid*/) {}

// A doacross nest is a construct of its own beside the loop that shares out its first loop: the
// slot keeps, per iteration of the first loop, 1 + the flattened index of the inner iterations
// posted so far (one thread runs an outer iteration's inner loops, so they post in order).
void __kmpc_doacross_init(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 num_dims,
                          const kmp_dim* dims) {
  if (num_dims < 1) fatal("__kmpc_doacross_init: " + std::to_string(num_dims) + " loops");
  ThreadState& state = self();
  KmpThread& kmp = kmp_thread(state);
  const std::uint64_t index = state.context.constructs++;
  WorkShare& ws = state.team().slots[index % kWorkShareSlots];
  Signal& signal = state.team().signal;
  if (ws.enter(index, signal)) {
    ws.doacross_counts.clear();
    for (kmp_int32 d = 0; d < num_dims; ++d) {
      ws.doacross_counts.push_back(trip_count(dims[d].lo, dims[d].up, dims[d].st));
    }
    ws.doacross_posted = std::make_unique<std::atomic<std::uint64_t>[]>(ws.doacross_counts[0]);
    ws.published(signal);
  }
  kmp.doacross = &ws;
  kmp.doacross_dims.assign(dims, dims + num_dims);
}

void __kmpc_doacross_wait(ident_t* /*loc*/, kmp_int32 /*gtid*/, const kmp_int64* vec) {
  ThreadState& state = self();
  const KmpThread& kmp = in_doacross(state, "__kmpc_doacross_wait");
  std::uint64_t outer = 0;
  std::uint64_t needed = 0;
  if (!doacross_position(kmp, vec, &outer, &needed)) return;
  const std::atomic<std::uint64_t>& posted = kmp.doacross->doacross_posted[outer];
  // acquire: see what the sink iteration wrote.
  state.team().signal.wait([&] { return posted.load(std::memory_order_acquire) >= needed; });
}

void __kmpc_doacross_post(ident_t* /*loc*/, kmp_int32 /*gtid*/, const kmp_int64* vec) {
  ThreadState& state = self();
  const KmpThread& kmp = in_doacross(state, "__kmpc_doacross_post");
  std::uint64_t outer = 0;
  std::uint64_t position = 0;
  if (!doacross_position(kmp, vec, &outer, &position)) return;
  // release: the iteration's writes, for the threads whose sinks wait for it.
  kmp.doacross->doacross_posted[outer].store(position, std::memory_order_release);
  state.team().signal.notify();
}

void __kmpc_doacross_fini(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  ThreadState& state = self();
  KmpThread& kmp = in_doacross(state, "__kmpc_doacross_fini");
  kmp.doacross->leave(state.team().size, state.team().signal);
  kmp.doacross = nullptr;
  kmp.doacross_dims.clear();
}

}  // extern "C"
