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

// prefer_vp(vp), then, for a free caller running elsewhere, a switch out that queues it there at
// once (where an idle processor may still steal it, see docs/scheduler.md "Stealing"), instead of
// at its next wake-up: a yield with nothing else to run would not move it.
void move_to_vp(int vp);

}  // namespace weft::this_thread
