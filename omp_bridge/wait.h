// How an OpenMP thread waits for a condition: at once if it holds, else weft's collaborative wait
// (an adaptive spin that lets the core's other threads run, then a park while the core checks
// the condition for it). A waiting worker thus never holds a core against a rank or another
// worker, however oversubscribed the core is.
#pragma once

#include <functional>
#include <utility>

#include "weft/sync.h"

namespace weft::omp {

template <class Pred>
void wait_for(Pred&& pred) {
  if (pred()) return;
  weft::wait_until(std::function<bool()>(std::forward<Pred>(pred)));
}

}  // namespace weft::omp
