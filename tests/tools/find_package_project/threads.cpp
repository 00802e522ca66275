// The README's C++ example against an installed weft (weft::weft): a typed user thread on the
// scheduler, joined.
#include <weft/scheduler.h>
#include <weft/sync.h>
#include <weft/this_thread.h>
#include <weft/thread.h>

#include <cstdio>

int main() {
  weft::Scheduler scheduler;
  weft::ThreadAttr rank;
  rank.type = weft::ThreadType::mpi_task;
  rank.placement = weft::Placement::pinned(0);
  int vp = -1;
  weft::Thread t = weft::spawn(rank, [&vp] { vp = weft::this_thread::vp(); });
  t.join();
  std::printf("an mpi_task thread ran on virtual processor %d\n", vp);
  return vp == 0 ? 0 : 1;
}
