// Cancellation (OMP_CANCELLATION=true): a cancelled parallel region releases its barriers, a
// cancelled loop or sections construct hands out no more chunks, a cancelled taskgroup starts no
// more of its tasks.
#pragma once

#include "thread_state.h"
#include "work_share.h"

namespace weft::omp {

// Whether the caller's construct `ws` or its region was cancelled.
bool cancelled(ThreadState& self, const WorkShare& ws);

}  // namespace weft::omp
