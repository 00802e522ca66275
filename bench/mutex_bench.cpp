// Mutex hand-off on one core: two threads take turns through a mutex, a condition variable and a
// turn variable, so one iteration is two hand-offs (A's turn, then B's). weft::Mutex +
// weft::ConditionVariable on two weft threads pinned to virtual processor 0, beside
// boost::fibers::mutex + condition_variable on two fibers of one kernel thread and std::mutex +
// std::condition_variable on two kernel threads, all on the same CPU.
#include <boost/fiber/all.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "bench_main.h"
#include "pinning.h"
#include "weft/sync.h"
#include "weft/thread.h"

namespace {

template <class Mutex, class ConditionVariable>
class Alternation {
 public:
  // Thread `me` (0 or 1) waits for its turn, then passes it; false once stopped.
  bool take_turn(int me) {
    std::unique_lock<Mutex> lock(mutex_);
    turn_changed_.wait(lock, [&] { return turn_ == me || stop_; });
    if (stop_) return false;
    turn_ = 1 - me;
    turn_changed_.notify_one();
    return true;
  }

  void play(int me) {
    while (take_turn(me)) {
    }
  }

  void drive(benchmark::State& state) {
    for (auto _ : state) take_turn(0);
    std::unique_lock<Mutex> lock(mutex_);
    stop_ = true;
    turn_changed_.notify_all();
  }

 private:
  Mutex mutex_;
  ConditionVariable turn_changed_;
  int turn_ = 0;
  bool stop_ = false;
};

void mutex_handoff_weft(benchmark::State& state) {
  Alternation<weft::Mutex, weft::ConditionVariable> game;
  weft::Thread partner = weft::spawn(weft::bench::pinned_to(0), [&] { game.play(1); });
  weft::Thread timed = weft::spawn(weft::bench::pinned_to(0), [&] { game.drive(state); });
  timed.join();
  partner.join();
}

void mutex_handoff_boost_fiber(benchmark::State& state) {
  weft::bench::run_pinned(weft::bench::first_cpu(), [&] {
    Alternation<boost::fibers::mutex, boost::fibers::condition_variable> game;
    boost::fibers::fiber partner([&] { game.play(1); });
    boost::fibers::fiber timed([&] { game.drive(state); });
    timed.join();
    partner.join();
  });
}

void mutex_handoff_std_thread(benchmark::State& state) {
  const int cpu = weft::bench::first_cpu();
  Alternation<std::mutex, std::condition_variable> game;
  std::thread partner = weft::bench::pinned_thread(cpu, [&] { game.play(1); });
  std::thread timed = weft::bench::pinned_thread(cpu, [&] { game.drive(state); });
  timed.join();
  partner.join();
}

BENCHMARK(mutex_handoff_weft)->Name("mutex_handoff/weft")->UseRealTime();
BENCHMARK(mutex_handoff_boost_fiber)->Name("mutex_handoff/boost_fiber")->UseRealTime();
BENCHMARK(mutex_handoff_std_thread)->Name("mutex_handoff/std_thread")->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return weft::bench::run_benchmarks(argc, argv);
}
