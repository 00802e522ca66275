// The window constructors (MPI-4.1 12.2), MPI_Win_free and the memory of dynamic windows.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "rma/hints.h"
#include "rma/window.h"
#include "rma/window_error.h"
#include "util/profiling.h"

using weft::mpi::check_comm;
using weft::mpi::check_initialized;
using weft::mpi::rma::check_win;
using weft::mpi::rma::Window;

namespace {

// What each rank tells the others about its memory at creation.
struct Published {
  std::uint64_t address;
  std::int64_t size;
  std::uint64_t offset;  // in the shared segment, when in_segment
  std::uint64_t host;    // a hash of the host name
  std::int32_t disp_unit;
  std::int32_t pid;
  std::int32_t in_segment;
  std::int32_t unused = 0;
  weft::mpi::rma::Exposure exposure;  // MPI_Win_create across processes: the pages it moved
};

std::uint64_t host_hash() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::hash<std::string_view>{}(host);
}

struct Arguments {
  std::string_view function;
  int flavor;
  void* base = nullptr;  // MPI_Win_create
  MPI_Aint size = 0;
  int disp_unit = 1;
  MPI_Info info = MPI_INFO_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
};

int check_arguments(const Arguments& a, MPI_Win* win) {
  if (int rc = check_initialized(a.function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(a.comm, a.function); rc != MPI_SUCCESS) return rc;
  if (win == nullptr) {
    return weft::mpi::raise(a.comm, a.function, MPI_ERR_ARG,
                            "win = NULL, expected where to store the window");
  }
  if (a.size < 0) {
    return weft::mpi::raise(a.comm, a.function, MPI_ERR_SIZE,
                            "size = " + std::to_string(a.size) + ", expected >= 0");
  }
  if (a.disp_unit <= 0) {
    return weft::mpi::raise(a.comm, a.function, MPI_ERR_DISP,
                            "disp_unit = " + std::to_string(a.disp_unit) + ", expected > 0");
  }
  return MPI_SUCCESS;
}

// Where the memory of the allocating flavors comes from: one segment of the window's ranks when
// they span processes (so every origin reaches every target by load and store) or the caller's
// own heap otherwise; MPI_Win_allocate_shared always takes the segment. Returns the caller's
// base, or null with `error` set.
std::byte* allocate_memory(Window& w, const Arguments& a, std::uint64_t& offset,
                           std::string& error) {
  const bool segment = a.flavor == MPI_WIN_FLAVOR_SHARED || w.comm->spans_processes;
  if (!segment) {
    if (a.size == 0) return nullptr;
    const std::size_t rounded = (static_cast<std::size_t>(a.size) + 63) / 64 * 64;
    w.private_memory.reset(static_cast<std::byte*>(std::aligned_alloc(64, rounded)));
    if (w.private_memory == nullptr) error = "cannot allocate " + std::to_string(a.size) + " bytes";
    return w.private_memory.get();
  }
  // Consecutive ranks' memory is contiguous in the segment (MPI-4.1 12.2.3's default).
  std::vector<MPI_Aint> sizes(static_cast<std::size_t>(w.size));
  PMPI_Allgather(&a.size, 1, MPI_AINT, sizes.data(), 1, MPI_AINT, w.comm);
  std::uint64_t total = 0;
  for (int r = 0; r < w.size; ++r) {
    if (r == w.rank) offset = total;
    total += static_cast<std::uint64_t>(sizes[static_cast<std::size_t>(r)]);
  }
  error = w.window_memory.create(w.comm, total);
  if (!error.empty()) return nullptr;
  return a.size == 0 ? nullptr : w.window_memory.data() + offset;
}

// Maps the pages the ranks of other processes exposed (MPI_Win_create across processes). Where
// any rank fails to map any of them, no rank keeps a mapping: every origin then reaches every
// target the same way. The owners' segment names go once all have tried.
void map_exposed_pages(Window& w, const std::vector<Published>& all, std::int32_t pid) {
  bool any = false;
  for (const Published& p : all) any = any || (!p.exposure.empty() && p.pid != pid);
  int failed = 0;
  if (any) {
    w.peer_pages = std::make_unique<weft::mpi::rma::PeerPages[]>(all.size());
    for (std::size_t r = 0; r < all.size() && failed == 0; ++r) {
      const Published& p = all[r];
      if (p.exposure.empty() || p.pid == pid) continue;
      failed = w.peer_pages[r].map(p.pid, p.exposure).empty() ? 0 : 1;
    }
  }
  if (w.flavor != MPI_WIN_FLAVOR_CREATE || !w.comm->spans_processes) return;
  int any_failed = 0;
  PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, w.comm);
  w.exposed.unlink();
  if (any_failed != 0) w.peer_pages.reset();
}

int make_window(const Arguments& a, void* baseptr, MPI_Win* win) {
  if (int rc = check_arguments(a, win); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::rma::check_hints(a.comm, a.function, a.info); rc != MPI_SUCCESS) {
    return rc;
  }
  auto* w = new Window;
  if (int rc = PMPI_Comm_dup(a.comm, &w->comm); rc != MPI_SUCCESS) {
    delete w;
    return rc;
  }
  w->owner_phase = &weft::mpi::caller_state().phase;
  PMPI_Comm_rank(w->comm, &w->rank);
  PMPI_Comm_size(w->comm, &w->size);
  w->flavor = a.flavor;
  w->disp_unit = a.disp_unit;
  w->bytes = a.flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : a.size;
  weft::mpi::rma::set_hints(*w, a.info);

  std::string error;
  std::uint64_t offset = 0;
  std::byte* base = static_cast<std::byte*>(a.base);
  if (a.flavor == MPI_WIN_FLAVOR_ALLOCATE || a.flavor == MPI_WIN_FLAVOR_SHARED) {
    base = allocate_memory(*w, a, offset, error);
  }
  if (error.empty())
    error = w->control_memory.create(w->comm, weft::mpi::rma::Control::bytes(w->size));
  // Every rank learns whether all succeeded, so all fail together.
  int failed = error.empty() ? 0 : 1, any_failed = 0;
  PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, w->comm);
  if (any_failed != 0) {
    if (error.empty()) error = "another rank of the window failed to make its part";
    PMPI_Comm_free(&w->comm);
    delete w;
    return weft::mpi::raise(a.comm, a.function, MPI_ERR_NO_MEM, error);
  }
  w->control.bind(w->control_memory.data(), w->size);
  w->base = base;

  const bool in_segment = w->window_memory.data() != nullptr;
  Published mine{
      reinterpret_cast<std::uint64_t>(base), w->bytes,           offset, host_hash(), a.disp_unit,
      static_cast<std::int32_t>(getpid()),   in_segment ? 1 : 0, 0,      {}};
  if (a.flavor == MPI_WIN_FLAVOR_CREATE && w->comm->spans_processes) {
    mine.exposure = w->exposed.expose(base, static_cast<std::size_t>(a.size));
  }
  std::vector<Published> all(static_cast<std::size_t>(w->size));
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, w->comm);
  const bool one_host =
      std::all_of(all.begin(), all.end(), [&](const Published& p) { return p.host == mine.host; });
  if (!one_host) {
    // The UCX path (registered memory, rkeys) that windows across nodes need is not built.
    w->control_memory.release();
    w->window_memory.release();
    PMPI_Comm_free(&w->comm);
    delete w;
    return weft::mpi::raise(a.comm, a.function, MPI_ERR_UNSUPPORTED_OPERATION,
                            "the communicator spans several hosts; weft's windows reach the "
                            "ranks of one host only");
  }
  map_exposed_pages(*w, all, mine.pid);
  w->targets.resize(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    const Published& p = all[r];
    weft::mpi::rma::Target& t = w->targets[r];
    t.address = p.address;
    t.size = p.size;
    t.disp_unit = p.disp_unit;
    t.pid = p.pid;
    t.same_process = p.pid == mine.pid;
    t.direct_end = p.size;
    if (p.in_segment != 0) {
      t.direct = p.size == 0 ? nullptr : w->window_memory.data() + p.offset;
    } else if (t.same_process) {
      t.direct = reinterpret_cast<std::byte*>(p.address);
    } else if (!p.exposure.empty() && w->peer_pages != nullptr) {
      // Only offsets in [direct_begin, direct_end) are ever added to `direct`.
      t.direct = reinterpret_cast<std::byte*>(w->peer_pages[r].translate(p.address));
      const std::uint64_t end = p.address + static_cast<std::uint64_t>(p.size);
      t.direct_begin = static_cast<MPI_Aint>(std::max(p.exposure.pages, p.address) - p.address);
      t.direct_end =
          static_cast<MPI_Aint>(std::min(p.exposure.pages + p.exposure.length, end) - p.address);
    }
    // Memory that some origin reaches only through cross-memory attach: every origin then takes
    // the stripe locks (the choice is the same on every rank, as the mappings are).
    // Dynamic windows never move (their memory is attached later).
    const bool whole =
        w->flavor != MPI_WIN_FLAVOR_DYNAMIC &&
        (p.size == 0 || (t.direct != nullptr && t.direct_begin == 0 && t.direct_end == p.size));
    if (w->comm->spans_processes && p.in_segment == 0 && !whole) {
      w->atomic_accumulates = false;
    }
  }
  w->size_attribute = w->bytes;
  w->disp_unit_attribute = w->disp_unit;
  w->flavor_attribute = w->flavor;
  w->model_attribute = w->model;
  w->epochs.locks.assign(static_cast<std::size_t>(w->size), 0);
  w->epochs.nocheck.assign(static_cast<std::size_t>(w->size), 0);
  w->epochs.posts_seen.assign(static_cast<std::size_t>(w->size), 0);
  if (baseptr != nullptr) *static_cast<void**>(baseptr) = base;
  *win = w;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                               MPI_Comm comm, MPI_Win* win) {
  if (size > 0 && base == nullptr) {
    if (int rc = check_initialized("MPI_Win_create"); rc != MPI_SUCCESS) return rc;
    return weft::mpi::raise(
        comm, "MPI_Win_create", MPI_ERR_ARG,
        "base = NULL with size = " + std::to_string(size) + ", expected the memory to expose");
  }
  return make_window({"MPI_Win_create", MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm},
                     nullptr, win);
}
WEFT_MPI_ALIAS(MPI_Win_create);

extern "C" int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                 void* baseptr, MPI_Win* win) {
  return make_window(
      {"MPI_Win_allocate", MPI_WIN_FLAVOR_ALLOCATE, nullptr, size, disp_unit, info, comm}, baseptr,
      win);
}
WEFT_MPI_ALIAS(MPI_Win_allocate);

extern "C" int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                        void* baseptr, MPI_Win* win) {
  return make_window(
      {"MPI_Win_allocate_shared", MPI_WIN_FLAVOR_SHARED, nullptr, size, disp_unit, info, comm},
      baseptr, win);
}
WEFT_MPI_ALIAS(MPI_Win_allocate_shared);

extern "C" int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return make_window({"MPI_Win_create_dynamic", MPI_WIN_FLAVOR_DYNAMIC, nullptr, 0, 1, info, comm},
                     nullptr, win);
}
WEFT_MPI_ALIAS(MPI_Win_create_dynamic);

// Any rank's memory that this rank reaches by load and store can be queried (MPI-4.1 12.2.3
// allows it for every flavor); other memory reads as size 0 and a null base.
extern "C" int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit,
                                     void* baseptr) {
  if (int rc = check_win(win, "MPI_Win_shared_query"); rc != MPI_SUCCESS) return rc;
  if (size == nullptr || disp_unit == nullptr || baseptr == nullptr) {
    return weft::mpi::rma::raise(win, "MPI_Win_shared_query", MPI_ERR_ARG,
                                 "size, disp_unit or baseptr is NULL, expected where to store "
                                 "the answer");
  }
  if (rank == MPI_PROC_NULL) {
    // The lowest rank with memory.
    rank = 0;
    for (int r = 0; r < win->size; ++r) {
      if (win->targets[static_cast<std::size_t>(r)].size > 0) {
        rank = r;
        break;
      }
    }
  } else if (rank < 0 || rank >= win->size) {
    return weft::mpi::rma::raise(win, "MPI_Win_shared_query", MPI_ERR_RANK,
                                 "rank = " + std::to_string(rank) + ", expected 0.." +
                                     std::to_string(win->size - 1) + " or MPI_PROC_NULL");
  }
  const weft::mpi::rma::Target& t = win->targets[static_cast<std::size_t>(rank)];
  const bool reachable = t.direct != nullptr && t.direct_begin == 0 && t.direct_end == t.size &&
                         win->flavor != MPI_WIN_FLAVOR_DYNAMIC;
  *size = reachable ? t.size : 0;
  *disp_unit = t.disp_unit;
  *static_cast<void**>(baseptr) = reachable ? t.direct : nullptr;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_shared_query);

extern "C" int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  if (int rc = check_win(win, "MPI_Win_attach"); rc != MPI_SUCCESS) return rc;
  if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    return weft::mpi::rma::raise(win, "MPI_Win_attach", MPI_ERR_RMA_FLAVOR,
                                 "win was not made by MPI_Win_create_dynamic");
  }
  if (size < 0 || (size > 0 && base == nullptr)) {
    return weft::mpi::rma::raise(
        win, "MPI_Win_attach", MPI_ERR_ARG,
        "size = " + std::to_string(size) + ", expected >= 0 with a non-null base");
  }
  const auto start = reinterpret_cast<std::uintptr_t>(base);
  std::lock_guard guard(win->attached_lock);
  // Attached regions may not overlap (MPI-4.1 12.2.4).
  auto next = win->attached.lower_bound(start);
  const bool overlaps_next = next != win->attached.end() && next->first < start + size;
  const bool overlaps_previous =
      next != win->attached.begin() &&
      std::prev(next)->first + static_cast<std::uintptr_t>(std::prev(next)->second) > start;
  if (size > 0 && (overlaps_next || overlaps_previous)) {
    return weft::mpi::rma::raise(win, "MPI_Win_attach", MPI_ERR_RMA_ATTACH,
                                 "the region overlaps one already attached");
  }
  win->attached[start] = size;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_attach);

extern "C" int PMPI_Win_detach(MPI_Win win, const void* base) {
  if (int rc = check_win(win, "MPI_Win_detach"); rc != MPI_SUCCESS) return rc;
  if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    return weft::mpi::rma::raise(win, "MPI_Win_detach", MPI_ERR_RMA_FLAVOR,
                                 "win was not made by MPI_Win_create_dynamic");
  }
  std::lock_guard guard(win->attached_lock);
  if (win->attached.erase(reinterpret_cast<std::uintptr_t>(base)) == 0) {
    return weft::mpi::rma::raise(win, "MPI_Win_detach", MPI_ERR_RMA_ATTACH,
                                 "base is not the start of a region attached to win");
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_detach);

extern "C" int PMPI_Win_free(MPI_Win* win) {
  if (win == nullptr) {
    if (int rc = check_initialized("MPI_Win_free"); rc != MPI_SUCCESS) return rc;
    return weft::mpi::raise(MPI_COMM_WORLD, "MPI_Win_free", MPI_ERR_ARG,
                            "win = NULL, expected the address of a window");
  }
  if (int rc = check_win(*win, "MPI_Win_free"); rc != MPI_SUCCESS) return rc;
  Window& w = **win;
  if (w.epochs.locked_targets > 0 || w.epochs.lock_all ||
      w.epochs.access == weft::mpi::rma::Access::pscw || w.epochs.exposed) {
    return weft::mpi::rma::raise(*win, "MPI_Win_free", MPI_ERR_RMA_SYNC,
                                 "an epoch is still open on win (a lock, MPI_Win_start or "
                                 "MPI_Win_post not yet closed)");
  }
  if (const weft::mpi::Outcome o = weft::mpi::delete_attributes<MPI_Win>(w.attributes, *win);
      !o.ok()) {
    return weft::mpi::rma::raise(*win, "MPI_Win_free", o.code, o.detail);
  }
  // Every origin has finished with every target's memory before any rank lets go of it.
  PMPI_Barrier(w.comm);
  // An owner may move its pages back while others still map them: their mappings hold the
  // segment's pages, which nobody touches any more, until they unmap them.
  w.peer_pages.reset();
  w.exposed.restore();
  w.window_memory.release();
  w.control_memory.release();
  w.private_memory.reset();
  PMPI_Comm_free(&w.comm);
  w.targets.clear();
  w.targets.shrink_to_fit();
  w.attached.clear();
  w.magic = Window::kFreed;
  *win = MPI_WIN_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_free);
