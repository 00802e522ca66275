// LLVM's ABI for parallel and teams regions (__kmpc_fork_call, __kmpc_fork_teams, the clauses
// pushed before them, serialized regions) and the thread queries, on the core's run_parallel and
// teams construct.
#include <array>
#include <cstdarg>
#include <string>
#include <utility>

#include "gomp_abi.h"
#include "kmp_thread.h"
#include "parallel.h"
#include "weft/error.h"

namespace weft::omp {

using kmp::kmp_int32;
using kmp::kmpc_micro;

namespace {

// Arguments an outlined region may take; libomp's limit is its stack, clang's the number of
// variables a region captures.
constexpr int kMaxArgs = 64;

// Calls `micro` with `argc` pointer arguments. A table of one caller per count, generated from
// the count, so that each call has the exact signature the outlined function was compiled with.
template <std::size_t... I>
void invoke(kmpc_micro micro, kmp_int32* gtid, kmp_int32* btid, void** args,
            std::index_sequence<I...>) {
  using Fn = void (*)(kmp_int32*, kmp_int32*, decltype((void)I, static_cast<void*>(nullptr))...);
  reinterpret_cast<Fn>(micro)(gtid, btid, args[I]...);
}

using Invoker = void (*)(kmpc_micro, kmp_int32*, kmp_int32*, void**);

template <std::size_t N>
void invoke_n(kmpc_micro micro, kmp_int32* gtid, kmp_int32* btid, void** args) {
  invoke(micro, gtid, btid, args, std::make_index_sequence<N>{});
}

template <std::size_t... N>
constexpr std::array<Invoker, sizeof...(N)> make_invokers(std::index_sequence<N...>) {
  return {&invoke_n<N>...};
}

constexpr auto kInvokers = make_invokers(std::make_index_sequence<kMaxArgs + 1>{});

// A region's outlined function and its arguments, as every thread of the team calls it.
struct Outlined {
  kmpc_micro micro;
  int argc;
  void* args[kMaxArgs];

  Outlined(const char* call, kmpc_micro fn, kmp_int32 count, va_list list)
      : micro(fn), argc(count) {
    if (count < 0 || count > kMaxArgs) {
      fatal(std::string(call) + ": an outlined region of " + std::to_string(count) +
            " arguments; weft takes up to " + std::to_string(kMaxArgs));
    }
    for (int i = 0; i < count; ++i) args[i] = va_arg(list, void*);
  }
  void call(kmp_int32 btid) {
    kmp_int32 gtid = self().gtid;
    kInvokers[static_cast<std::size_t>(argc)](micro, &gtid, &btid, args);
  }
};

void run_region(void* data) {
  static_cast<Outlined*>(data)->call(self().num());
}

// A teams region's initial thread: bound thread number 0 in its team of one.
void run_teams_region(void* data) {
  static_cast<Outlined*>(data)->call(0);
}

// The proc_bind values of clang 14 (master 2, close 3, spread 4, primary 5, default 6) as
// GOMP_parallel's flags; 0 for none.
unsigned proc_bind_flags(kmp_int32 proc_bind) {
  switch (proc_bind) {
    case 2:
    case 5:
      return static_cast<unsigned>(ProcBind::primary);
    case 3:
      return static_cast<unsigned>(ProcBind::close);
    case 4:
      return static_cast<unsigned>(ProcBind::spread);
    case 1:
      return static_cast<unsigned>(ProcBind::true_);
    default:
      return 0;
  }
}

}  // namespace

SerialRegion::SerialRegion(ThreadState& self)
    : saved(self.context),
      team(1, self.team().level + 1, self.team().active_level, self.context.team, self.num(),
           self.icv().for_team(self.team().level + 1)) {
  team.league_num = self.league_num;
  team.league_size = self.league_size;
}

KmpThread::~KmpThread() {
  for (auto& [original, copy] : threadprivate) {
    if (copy.destructor != nullptr) copy.destructor(copy.bytes.get());
  }
}

KmpThread& kmp_thread(ThreadState& self) {
  if (!self.kmp) self.kmp = std::make_unique<KmpThread>();
  return *self.kmp;
}

}  // namespace weft::omp

using namespace weft::omp;
using namespace weft::omp::kmp;

extern "C" {

kmp_int32 __kmpc_global_thread_num(ident_t* /*loc*/) {
  return self().gtid;
}
kmp_int32 __kmpc_bound_thread_num(ident_t* /*loc*/) {
  return self().num();
}
kmp_int32 __kmpc_bound_num_threads(ident_t* /*loc*/) {
  return self().team().size;
}
kmp_int32 __kmpc_in_parallel(ident_t* /*loc*/) {
  return self().team().active_level > 0 ? 1 : 0;
}
// weft needs no start-up or shut-down call: its state is made at a thread's first OpenMP call.
kmp_int32 __kmpc_ok_to_fork(ident_t* /*loc*/) {
  return 1;
}
void __kmpc_begin(ident_t* /*loc*/, kmp_int32 /*flags*/) {}
void __kmpc_end(ident_t* /*loc*/) {}

void __kmpc_push_num_threads(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 num_threads) {
  kmp_thread(self()).num_threads = num_threads;
}

void __kmpc_push_proc_bind(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 proc_bind) {
  kmp_thread(self()).proc_bind = proc_bind_flags(proc_bind);
}

void __kmpc_fork_call(ident_t* /*loc*/, kmp_int32 argc, kmpc_micro microtask, ...) {
  va_list list;
  va_start(list, microtask);
  Outlined outlined("__kmpc_fork_call", microtask, argc, list);
  va_end(list);
  ThreadState& state = self();
  unsigned num_threads = 0;
  unsigned flags = 0;
  if (state.kmp) {
    num_threads = static_cast<unsigned>(std::max(0, state.kmp->num_threads));
    flags = state.kmp->proc_bind;
    state.kmp->num_threads = 0;
    state.kmp->proc_bind = 0;
  }
  run_parallel(run_region, &outlined, num_threads, flags);
}

// if(0) or a region the compiler serializes: the caller runs the outlined function itself,
// between these two calls, as the only thread of a new team.
void __kmpc_serialized_parallel(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  ThreadState& state = self();
  KmpThread& kmp = kmp_thread(state);
  kmp.num_threads = 0;
  kmp.proc_bind = 0;
  auto region = std::make_unique<SerialRegion>(state);
  enter_team(state, region->team, 0, region->implicit);
  kmp.serialized.push_back(std::move(region));
}

void __kmpc_end_serialized_parallel(ident_t* /*loc*/, kmp_int32 /*gtid*/) {
  ThreadState& state = self();
  KmpThread& kmp = kmp_thread(state);
  if (kmp.serialized.empty()) {
    weft::fatal("__kmpc_end_serialized_parallel without __kmpc_serialized_parallel");
  }
  std::unique_ptr<SerialRegion> region = std::move(kmp.serialized.back());
  kmp.serialized.pop_back();
  master_join(state, region->team);
  state.context = region->saved;
}

void __kmpc_push_num_teams(ident_t* /*loc*/, kmp_int32 /*gtid*/, kmp_int32 num_teams,
                           kmp_int32 num_threads) {
  KmpThread& kmp = kmp_thread(self());
  kmp.num_teams = std::max(0, num_teams);
  kmp.teams_thread_limit = std::max(0, num_threads);
}

// num_teams(lower:upper) of OpenMP 5.1: weft makes `upper` teams, which the clause allows.
void __kmpc_push_num_teams_51(ident_t* loc, kmp_int32 gtid, kmp_int32 lower, kmp_int32 upper,
                              kmp_int32 num_threads) {
  __kmpc_push_num_teams(loc, gtid, upper > 0 ? upper : lower, num_threads);
}

void __kmpc_fork_teams(ident_t* /*loc*/, kmp_int32 argc, kmpc_micro microtask, ...) {
  va_list list;
  va_start(list, microtask);
  Outlined outlined("__kmpc_fork_teams", microtask, argc, list);
  va_end(list);
  KmpThread& kmp = kmp_thread(self());
  const auto num_teams = static_cast<unsigned>(kmp.num_teams);
  const auto thread_limit = static_cast<unsigned>(kmp.teams_thread_limit);
  kmp.num_teams = 0;
  kmp.teams_thread_limit = 0;
  GOMP_teams_reg(run_teams_region, &outlined, num_teams, thread_limit, 0);
}

}  // extern "C"
