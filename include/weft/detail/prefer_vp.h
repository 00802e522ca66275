// Where a free thread goes the next time it is made runnable: for runtimes built on weft that place
// their own threads (the OpenMP bridge's hot teams). Apart from weft/this_thread.h so that only
// its users are rebuilt when it changes.
#pragma once

namespace weft::this_thread {

// For a free calling thread: the virtual processor its next wake-up (or requeue at a yield) queues
// it on, instead of the one that last ran it; an idle one may still steal it from there. Nothing
// for a pinned or numa thread. Throws weft::Error when `vp` is not a virtual processor of the
// running scheduler or the caller is not a weft thread.
void prefer_vp(int vp);

}  // namespace weft::this_thread
