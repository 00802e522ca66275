// Spawn and join of a thread with an empty body, warm: each benchmark first spawns and joins
// kWarmUp threads untimed, so that stacks and control blocks come from the runtimes' pools and
// caches. weft from a weft thread (the common case: a rank or a worker spawning helpers) and from
// the main kernel thread (its join then blocks in the kernel), beside std::thread and Boost.Fiber.
// The spawning thread runs on the same CPU for all but weft_from_main.
#include <boost/fiber/all.hpp>
#include <thread>

#include "bench_main.h"
#include "pinning.h"
#include "weft/thread.h"

namespace {

constexpr int kWarmUp = 256;

void empty_body() {}

// Spawns and joins kWarmUp threads untimed, then one per iteration.
template <class SpawnJoin>
void measure(benchmark::State& state, SpawnJoin spawn_join) {
  for (int i = 0; i < kWarmUp; ++i) spawn_join();
  for (auto _ : state) spawn_join();
}

void spawn_join_weft(benchmark::State& state) {
  weft::spawn(weft::bench::pinned_to(0), [&] {
    measure(state, [] { weft::spawn(empty_body).join(); });
  }).join();
}

void spawn_join_weft_from_main(benchmark::State& state) {
  measure(state, [] { weft::spawn(empty_body).join(); });
}

void spawn_join_std_thread(benchmark::State& state) {
  weft::bench::run_pinned(weft::bench::first_cpu(),
                          [&] { measure(state, [] { std::thread(empty_body).join(); }); });
}

void spawn_join_boost_fiber(benchmark::State& state) {
  weft::bench::run_pinned(weft::bench::first_cpu(),
                          [&] { measure(state, [] { boost::fibers::fiber(empty_body).join(); }); });
}

BENCHMARK(spawn_join_weft)->Name("spawn_join/weft")->UseRealTime();
BENCHMARK(spawn_join_weft_from_main)->Name("spawn_join/weft_from_main")->UseRealTime();
BENCHMARK(spawn_join_std_thread)->Name("spawn_join/std_thread")->UseRealTime();
BENCHMARK(spawn_join_boost_fiber)->Name("spawn_join/boost_fiber")->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return weft::bench::run_benchmarks(argc, argv);
}
