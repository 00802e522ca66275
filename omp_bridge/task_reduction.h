// Task reductions (task_reduction/in_reduction, reduction(task, ...), taskloop reductions) as
// GCC lowers them: the compiler describes the reduction variables in an array it owns; the
// runtime allocates one zeroed private copy of them per thread of the team, maps an original
// variable to the copy of whichever thread runs a task (GOMP_task_reduction_remap), and frees the
// copies once the compiler's code has combined them.
//
// GCC's descriptor (uintptr_t words): [0] number of variables, [1] bytes of one thread's copy,
// [2] alignment (the runtime replaces it with the copies' address), [3] allocator, [4] next
// descriptor of the same registration or, on the last, the registration it shadows (the
// runtime's link), [5] the runtime's (weft: nonzero on a registration's first descriptor),
// [6] the runtime's (weft: end of the copies), then per variable {address, offset in a copy,
// the runtime's (weft: its descriptor)}, by increasing offset.
#pragma once

#include <cstdint>

namespace weft::omp {

struct ThreadState;
class WorkShare;

// Allocates the copies of registration `data` for a team of `threads` and chains it in front of
// `shadowed` (the registrations visible before it, null for none). With `first` (a worksharing
// construct's, registered by the thread that entered it first), takes that registration's copies
// instead of allocating: every thread of the construct passes its own descriptor.
void register_reductions(std::uintptr_t* data, std::uintptr_t* shadowed,
                         const std::uintptr_t* first, int threads);
// Frees the copies of registration `data` (not those of the registrations it shadows).
void unregister_reductions(std::uintptr_t* data);

// A worksharing construct with task reductions (loop, sections, scope): opens the calling
// thread's taskgroup of the construct and registers `data` in it, allocating the copies when the
// caller is the construct's `initializer` (before `ws` is published), else taking those of the
// initializer's registration, which `ws` holds.
void register_workshare_reductions(ThreadState& self, WorkShare& ws, bool initializer,
                                   std::uintptr_t* data);

}  // namespace weft::omp
