#include "pool.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "places.h"
#include "team.h"
#include "thread_state.h"
#include "weft/detail/prefer_vp.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/trace_team.h"

namespace weft::omp {

struct Worker {
  ThreadState state;
  Pool* pool = nullptr;
  int num = 0;
  // Set by the thread that wakes the worker; read by the worker after the event.
  Team* team = nullptr;
  bool quit = false;
  // The VP the worker was placed on: its place's, (master's place + num) mod places.
  int home_vp = 0;
  // Set with `team`: whether the worker goes back to home_vp after the region (Pool::start).
  bool spread = false;
  // Set with `team`: in a team of 2 with free workers on 2 places or more, the VP its master
  // started the region on; -1 otherwise.
  int master_vp = -1;
  // Whether the worker's last shares were short enough to run beside its master (follow_share).
  bool beside_master = false;
  // Set with `team`: the master's stamp, which the worker's region span is placed after.
  std::uint64_t trace_stamp = 0;
  weft::Event start{weft::Event::Mode::automatic};
  weft::Thread thread;

  void run();
  void follow_share(int master, std::chrono::steady_clock::duration share);
};

namespace {

// A team of 2 on free workers: where its worker runs (docs/omp_bridge.md, "A team of two"). A
// share is the worker's time in a region between two of its barriers (or its begin and end).
// Below kShortShare the worker runs on its master's VP: the two then hand the core to each other
// at every barrier and join (a yield, about 0.3 us a region), where across two cores each hand-off
// waits for the other core (1.2-1.5 us a region, and a sleeping core's futex wake-up, 5-50 us,
// after a long wait). Above kLongShare it leaves the master's VP: its share would otherwise wait
// for the master's (the other core may be asleep, and a thread queued by its own core's thread
// wakes no other). Between the two it stays where it is, so that a share near either bound does
// not move it at every region.
constexpr std::chrono::nanoseconds kShortShare{2000};
constexpr std::chrono::nanoseconds kLongShare{5000};

}  // namespace

void Worker::run() {
  adopt(state);
  for (;;) {
    start.wait();
    if (quit) break;
    Team& current = *team;
    // Read with `team`, before the join: once joined, the master may set it for its next region.
    const bool go_home = spread;
    const int master = master_vp;
    const std::uint64_t stamp = trace_stamp;
    pool->wake(2 * num + 1);
    pool->wake(2 * num + 2);
    // Moved while the master runs its own share: the master runs the worker at its first wait.
    if (master >= 0 && beside_master && this_thread::vp() != master) {
      this_thread::move_to_vp(master);
    }
    const auto began =
        master >= 0 ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    enter_team(state, current, num, state.implicit);
    std::uint64_t barriers = 0;
    {
      // Within the master's region: no clock read, placed after the master's begin (its stamp).
      const trace::TeamSpan span(trace::Category::omp, "parallel region",
                                 static_cast<std::uint64_t>(num), stamp, trace::Member::worker);
      current.fn(current.data);
      // Before the join, after which the team may be gone.
      if (master >= 0) barriers = current.barrier.completed();
      worker_join(state, current);
    }
    if (go_home && this_thread::vp() != home_vp) this_thread::prefer_vp(home_vp);
    if (master >= 0) {
      follow_share(master, (std::chrono::steady_clock::now() - began) /
                               static_cast<std::int64_t>(barriers + 1));
    }
  }
  // The worker's own hot pools (nested regions) end with it, innermost first.
  while (!state.pools.empty()) state.pools.pop_back();
}

void Worker::follow_share(int master, std::chrono::steady_clock::duration share) {
  if (share < kShortShare) {
    beside_master = true;
    // A worker that parks before the next region is then woken on the master's VP, with no
    // wake-up of its own VP to make.
    if (this_thread::vp() != master) this_thread::prefer_vp(master);
    return;
  }
  if (share <= kLongShare) return;
  beside_master = false;
  if (this_thread::vp() != master) return;
  // Its own place's VP, unless the master moved there (an idle VP stole it while it waited).
  int away = home_vp;
  for (auto vp = state.vps->begin(); away == master && vp != state.vps->end(); ++vp) away = *vp;
  // Now, not at the next wake-up: a worker waiting on the master's VP would take its start there.
  if (away != master) this_thread::move_to_vp(away);
}

Pool::Pool(ThreadState& owner) : owner_(owner) {}

Pool::~Pool() {
  for (auto& worker : workers_) {
    worker->quit = true;
    worker->start.set();
  }
  for (auto& worker : workers_) worker->thread.join();
}

Worker& Pool::worker(int num) {
  return *workers_[static_cast<std::size_t>(num - 1)];
}

namespace {

// The place (places.h) of thread `num` of a team of `size`, the master's place being `first` of
// `places` (OpenMP's close and spread policies; spread when a thread per place still leaves places
// over).
int place_of(int num, int size, int first, int places, ProcBind bind) {
  if (bind == ProcBind::primary) return first;
  if (bind == ProcBind::spread && size < places) return (first + num * places / size) % places;
  return (first + num) % places;
}

}  // namespace

void Pool::grow(int size, ProcBind bind) {
  // The common case, a hot team reused as it is: nothing to look up.
  if (bind == bind_ && static_cast<int>(workers_.size()) >= size - 1) return;
  const std::vector<int>& vps = *owner_.vps;
  if (vps.empty()) {
    fatal("an OpenMP parallel region of " + std::to_string(size) +
          " threads needs a running weft scheduler (build the program with weftcc -fopenmp)");
  }
  // Workers keep the placement they were spawned with: a new binding policy needs new ones.
  if (bind != bind_ && !workers_.empty()) {
    for (auto& worker : workers_) {
      worker->quit = true;
      worker->start.set();
    }
    for (auto& worker : workers_) worker->thread.join();
    workers_.clear();
  }
  bind_ = bind;
  placed_anew_ = true;
  const std::vector<Place> places = rank_places(vps);
  const int count = static_cast<int>(places.size());
  places_ = count;
  const int here = this_thread::vp();
  const auto found = std::find(vps.begin(), vps.end(), here);
  int first = found != vps.end() ? place_holding(places, static_cast<int>(found - vps.begin())) : 0;
  if (owner_.place >= 0 && owner_.place < count) first = owner_.place;
  first = std::max(first, 0);
  const Scheduler* scheduler = Scheduler::current();
  const GlobalIcvs& global = global_icvs();
  while (static_cast<int>(workers_.size()) < size - 1) {
    auto worker = std::make_unique<Worker>();
    worker->pool = this;
    worker->num = static_cast<int>(workers_.size()) + 1;
    worker->state.rank = owner_.rank;
    worker->state.vps = owner_.vps;
    worker->state.implicit.implicit = true;
    const int place = place_of(worker->num, size, first, count, bind);
    // Threads sharing a place of several cores take them in turn.
    const std::vector<int>& members = places[static_cast<std::size_t>(place)].vps;
    const int vp = vps[static_cast<std::size_t>(
        members[static_cast<std::size_t>(worker->num / count) % members.size()])];
    ThreadAttr attr;
    attr.type = ThreadType::omp_worker;
    attr.rank = owner_.rank;  // so that MPI calls from the worker act for the rank
    attr.stack_size = global.stack_size;
    if (bind == ProcBind::false_) {
      attr.placement = Placement::free(vp);
    } else if (global.places.kind == PlaceKind::numa_node) {
      worker->state.place = place;
      attr.placement = Placement::numa(scheduler->vp_numa(vp));
    } else {
      // A thread bound to a place of several cores runs on one of them (inside its place).
      worker->state.place = place;
      attr.placement = Placement::pinned(vp);
    }
    worker->home_vp = vp;
    Worker* raw = worker.get();
    worker->thread = spawn(attr, [raw] { raw->run(); });
    workers_.push_back(std::move(worker));
  }
}

void Pool::start(Team& team, ProcBind bind, std::uint64_t trace_stamp) {
  grow(team.size, bind);
  size_ = team.size;
  team.pool = this;
  team.display_all = placed_anew_;
  placed_anew_ = false;
  if (spin_budget_ns_ >= 0) team.signal.set_budget_ns(spin_budget_ns_);
  // A free worker is woken where it last ran, so a team that more threads than places share
  // drifts: an idle VP steals a whole thread at a time, and the thread stays with the thief. After
  // a few regions most of the team sits on one VP and starts there, behind whichever teammate runs
  // without a scheduling point (syncbench's TASK: 6 of 8 threads' tasks on one of 2 VPs), while
  // the other VP waits to be woken and to steal them one by one. The workers of such a team go
  // back to the VP they were placed on when they leave a region (Worker::run), so that the next
  // one starts spread, each still free to be stolen. A team of 2 that fits its places runs its
  // worker beside the master or away from it by the length of its shares (Worker::follow_share):
  // a short region of 2 threads on 2 cores is cheaper on one core. Larger teams that fit are left
  // where their workers last ran: gathered on one VP, three threads or more leave two queued,
  // which an idle VP takes at once.
  const bool spread = bind == ProcBind::false_ && team.size > places_;
  const int master_vp =
      bind == ProcBind::false_ && team.size == 2 && places_ >= 2 ? this_thread::vp() : -1;
  for (int num = 1; num < team.size; ++num) {
    Worker& member = worker(num);
    member.team = &team;
    member.spread = spread;
    member.master_vp = master_vp;
    member.trace_stamp = trace_stamp;
  }
  wake(1);
  wake(2);
}

void Pool::wake(int num) {
  if (num < size_) worker(num).start.set();
}

}  // namespace weft::omp
