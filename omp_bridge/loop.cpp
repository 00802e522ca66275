#include "loop.h"

#include <algorithm>
#include <string>

#include "cancellation.h"
#include "task_reduction.h"
#include "team.h"
#include "weft/error.h"

namespace weft::omp {

namespace {

// Hands the ordered turn to the next chunk once the caller's chunk is done.
void release_ordered(LoopCursor& cursor, Signal& signal) {
  WorkShare& ws = *cursor.ws;
  // acquire: the previous chunk's ordered regions happen before this chunk's end.
  signal.wait([&] { return ws.ordered_next.load(std::memory_order_acquire) == cursor.lo; });
  ws.ordered_next.store(cursor.hi, std::memory_order_release);
  signal.notify();
  cursor.has_chunk = false;
}

bool take_chunk(ThreadState& self, LoopCursor& cursor, std::uint64_t* lo, std::uint64_t* hi) {
  WorkShare& ws = *cursor.ws;
  const Team& team = self.team();
  const std::uint64_t count = ws.space.count;
  const auto threads = static_cast<std::uint64_t>(team.size);
  if (cancelled(self, ws)) return false;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  switch (ws.kind) {
    case ScheduleKind::static_:
    case ScheduleKind::auto_: {
      const auto num = static_cast<std::uint64_t>(self.num());
      if (ws.chunk == 0 && ws.multiple > 1) {
        // libomp's static_balanced_chunked: equal shares rounded up to the SIMD width.
        if (cursor.static_chunks++ != 0) return false;
        std::uint64_t share = (count + threads - 1) / threads;
        share = (share + ws.multiple - 1) / ws.multiple * ws.multiple;
        first = std::min(count, num * share);
        last = std::min(count, first + share);
      } else if (ws.chunk == 0) {
        if (cursor.static_chunks++ != 0) return false;
        const std::uint64_t share = count / threads;
        const std::uint64_t extra = count % threads;
        first = num * share + std::min(num, extra);
        last = first + share + (num < extra ? 1 : 0);
      } else {
        const std::uint64_t index = num + cursor.static_chunks++ * threads;
        if (index >= (count + ws.chunk - 1) / ws.chunk) return false;
        first = index * ws.chunk;
        last = std::min(first + ws.chunk, count);
      }
      break;
    }
    case ScheduleKind::dynamic:
      // relaxed: the counter only splits the iterations; it orders nothing else.
      first = ws.next.fetch_add(ws.chunk, std::memory_order_relaxed);
      last = std::min(first + ws.chunk, count);
      break;
    case ScheduleKind::guided: {
      first = ws.next.load(std::memory_order_relaxed);
      do {
        if (first >= count) return false;
        std::uint64_t share = std::max(ws.chunk, (count - first + threads - 1) / threads);
        share = (share + ws.multiple - 1) / ws.multiple * ws.multiple;
        last = first + std::min(count - first, share);
        // relaxed: as for dynamic.
      } while (!ws.next.compare_exchange_weak(first, last, std::memory_order_relaxed));
      break;
    }
  }
  if (first >= last) return false;
  *lo = cursor.lo = first;
  *hi = cursor.hi = last;
  cursor.has_chunk = true;
  return true;
}

}  // namespace

LoopSchedule decode_schedule(long sched, long chunk, const char* call) {
  const long kind = sched & 0x7fffffffL;
  if (kind == 0) return kRuntimeSchedule;
  if (kind < 1 || kind > 4) {
    fatal(std::string(call) + ": unknown schedule " + std::to_string(sched));
  }
  return fixed_schedule(static_cast<ScheduleKind>(kind), chunk);
}

void prepare_loop(ThreadState& self, WorkShare& ws, const IterationSpace& space,
                  LoopSchedule schedule, bool ordered) {
  const auto width = static_cast<std::uint64_t>(std::max(1L, schedule.simd_width));
  if (schedule.runtime) {
    schedule.kind = self.icv().run_schedule.kind;
    schedule.chunk = self.icv().run_schedule.chunk;
    // As libomp runs schedule(simd:runtime): static without a chunk is balanced in multiples of
    // the width, any other chunk (1 by default) is multiplied by it and guided chunks are
    // multiples of the product.
    if (width > 1 && (schedule.chunk > 0 || (schedule.kind != ScheduleKind::static_ &&
                                             schedule.kind != ScheduleKind::auto_))) {
      schedule.chunk = std::max(1L, schedule.chunk) * static_cast<long>(width);
    }
  }
  ws.space = space;
  ws.kind = schedule.kind;
  ws.ordered = ordered;
  // libomp's guided_simd hands out multiples of the whole chunk.
  ws.multiple = width > 1 && schedule.kind == ScheduleKind::guided
                    ? static_cast<std::uint64_t>(std::max(1L, schedule.chunk))
                    : width;
  if (schedule.kind == ScheduleKind::static_ || schedule.kind == ScheduleKind::auto_) {
    ws.chunk = schedule.kind == ScheduleKind::auto_
                   ? 0
                   : static_cast<std::uint64_t>(std::max(0L, schedule.chunk));
  } else {
    ws.chunk = static_cast<std::uint64_t>(std::max(1L, schedule.chunk));
  }
}

bool loop_start(ThreadState& self, const IterationSpace& space, LoopSchedule schedule, bool ordered,
                std::uint64_t* lo, std::uint64_t* hi, ConstructRequests requests) {
  return loop_start_prepared(
      self, [&](WorkShare& ws) { prepare_loop(self, ws, space, schedule, ordered); }, lo, hi,
      requests);
}

bool loop_start_prepared(ThreadState& self, const std::function<void(WorkShare&)>& prepare,
                         std::uint64_t* lo, std::uint64_t* hi, ConstructRequests requests) {
  const std::uint64_t index = self.context.constructs++;
  WorkShare& ws = self.team().slots[index % kWorkShareSlots];
  Signal& signal = self.team().signal;
  const bool initializer = ws.enter(index, signal);
  if (initializer) {
    prepare(ws);
    if (requests.mem != nullptr) {
      ws.shared_memory.assign(reinterpret_cast<std::uintptr_t>(*requests.mem), std::byte{0});
    }
  }
  if (requests.reductions != nullptr) {
    register_workshare_reductions(self, ws, initializer, requests.reductions);
  }
  if (initializer) ws.published(signal);
  if (requests.mem != nullptr) *requests.mem = ws.shared_memory.data();
  self.context.loop = {&ws, 0, 0, 0, false};
  if (lo == nullptr) return true;
  return loop_next(self, lo, hi);
}

bool loop_next(ThreadState& self, std::uint64_t* lo, std::uint64_t* hi) {
  LoopCursor& cursor = self.context.loop;
  if (cursor.has_chunk) {
    if (cursor.ws->ordered) {
      release_ordered(cursor, self.team().signal);
    } else {
      cursor.has_chunk = false;
    }
  }
  return take_chunk(self, cursor, lo, hi);
}

bool loop_end(ThreadState& self, bool wait) {
  LoopCursor& cursor = self.context.loop;
  Team& team = self.team();
  if (cursor.has_chunk && cursor.ws->ordered) release_ordered(cursor, team.signal);
  cursor.ws->leave(team.size, team.signal);
  cursor = {};
  if (wait) team.barrier.wait(self);
  return team.cancelled.load(std::memory_order_relaxed);
}

void ordered_wait(ThreadState& self) {
  const LoopCursor& cursor = self.context.loop;
  if (cursor.ws == nullptr || !cursor.ws->ordered || !cursor.has_chunk) return;
  const WorkShare& ws = *cursor.ws;
  // acquire: the ordered regions of earlier chunks happen before this one.
  self.team().signal.wait(
      [&] { return ws.ordered_next.load(std::memory_order_acquire) == cursor.lo; });
}

}  // namespace weft::omp
