// The communication calls (MPI-4.1 12.3): put, get, the accumulates, and their request forms.
// The origin does the whole transfer before the call returns (target_memory.h, accumulate.h), so
// a request-based call returns a request already complete.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "datatype/datatype.h"
#include "datatype/datatype_layout.h"
#include "op/op.h"
#include "op/op_object.h"
#include "pt2pt/p2p.h"
#include "request/request.h"
#include "rma/accumulate.h"
#include "rma/epoch.h"
#include "rma/local_copy.h"
#include "rma/target_memory.h"
#include "rma/window_error.h"
#include "util/profiling.h"

using weft::mpi::Datatype;
using weft::mpi::rma::check_win;
using weft::mpi::rma::Place;
using weft::mpi::rma::raise;
using weft::mpi::rma::Window;

namespace {

int check_count(Window& win, std::string_view function, std::string_view argument, int count) {
  if (count >= 0) return MPI_SUCCESS;
  return raise(&win, function, MPI_ERR_COUNT,
               std::string(argument) + " = " + std::to_string(count) + ", expected >= 0");
}

int check_type(Window& win, std::string_view function, std::string_view argument,
               MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) {
    return raise(&win, function, MPI_ERR_TYPE,
                 std::string(argument) + " = MPI_DATATYPE_NULL, expected a datatype");
  }
  if (!type->layout->predefined && !type->layout->committed.load(std::memory_order_relaxed)) {
    return raise(&win, function, MPI_ERR_TYPE,
                 std::string(argument) + " is not committed, expected MPI_Type_commit first");
  }
  return MPI_SUCCESS;
}

// What every operation checks about its target; `place` is where its data lies. Returns
// MPI_SUCCESS with `skip` set for MPI_PROC_NULL.
int check_target(Window& win, std::string_view function, int target_rank, MPI_Aint target_disp,
                 int target_count, MPI_Datatype target_type, Place& place, bool& skip) {
  if (int rc = check_count(win, function, "target_count", target_count); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_type(win, function, "target_datatype", target_type); rc != MPI_SUCCESS) {
    return rc;
  }
  skip = target_rank == MPI_PROC_NULL;
  if (skip) return MPI_SUCCESS;
  if (target_rank < 0 || target_rank >= win.size) {
    return raise(&win, function, MPI_ERR_RANK,
                 "target_rank = " + std::to_string(target_rank) + ", expected 0.." +
                     std::to_string(win.size - 1) + " or MPI_PROC_NULL");
  }
  if (int rc = weft::mpi::rma::check_access(win, target_rank, function); rc != MPI_SUCCESS) {
    return rc;
  }
  const std::string outside = weft::mpi::rma::locate(
      win, target_rank, target_disp, static_cast<std::size_t>(target_count), *target_type, place);
  if (!outside.empty()) return raise(&win, function, MPI_ERR_RMA_RANGE, outside);
  return MPI_SUCCESS;
}

// The origin's or the result's buffer: `which` names its arguments (no string is built on the
// way of a valid call, which is every put's and get's).
enum class Buffer { origin, result };
int check_origin(Window& win, std::string_view function, Buffer which, int count,
                 MPI_Datatype type) {
  const bool origin = which == Buffer::origin;
  if (int rc = check_count(win, function, origin ? "origin_count" : "result_count", count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return check_type(win, function, origin ? "origin_datatype" : "result_datatype", type);
}

// An accumulate's operation and types: a predefined operation defined on the target's type,
// and origin and target made of the same predefined type (MPI-4.1 12.3.4).
int check_accumulate(Window& win, std::string_view function, MPI_Op op, MPI_Datatype origin,
                     MPI_Datatype target) {
  if (op == MPI_OP_NULL || op->kind == weft::mpi::OpKind::user) {
    return raise(&win, function, MPI_ERR_OP,
                 op == MPI_OP_NULL ? "op = MPI_OP_NULL, expected a predefined operation"
                                   : "op is a user operation, expected a predefined one");
  }
  if (!weft::mpi::defined_for(op, target)) {
    return raise(&win, function, MPI_ERR_OP,
                 std::string(weft::mpi::name(op)) + " is not defined on the target datatype");
  }
  if (op->kind != weft::mpi::OpKind::no_op && origin != MPI_DATATYPE_NULL &&
      origin->layout != nullptr && origin->basic() != target->basic()) {
    return raise(&win, function, MPI_ERR_TYPE,
                 "the origin and target datatypes are made of different predefined types");
  }
  return MPI_SUCCESS;
}

int failed_transfer(Window& win, std::string_view function, const std::string& error) {
  return raise(&win, function, MPI_ERR_OTHER, error);
}

// Request-based operations belong to passive-target epochs (MPI-4.1 12.3.5).
int check_passive(Window& win, std::string_view function, int target_rank) {
  const auto& e = win.epochs;
  if (target_rank == MPI_PROC_NULL || e.lock_all ||
      (target_rank >= 0 && target_rank < win.size &&
       e.locks[static_cast<std::size_t>(target_rank)] != 0)) {
    return MPI_SUCCESS;
  }
  return raise(&win, function, MPI_ERR_RMA_SYNC,
               "request-based operations need a passive-target epoch (MPI_Win_lock or "
               "MPI_Win_lock_all) toward the target");
}

// The request of a request-based call, complete at once.
int completed_request(Window& win, MPI_Request* request, std::string_view function) {
  if (request == nullptr) {
    return raise(&win, function, MPI_ERR_ARG, "request = NULL, expected where to store it");
  }
  weft::mpi::Caller caller{weft::mpi::caller_world_rank(), win.rank, &weft::mpi::caller_state()};
  weft::mpi::Request* r = caller.state->requests.get();
  weft::mpi::prepare(*r, weft::mpi::RequestKind::send, weft::mpi::SendMode::standard, nullptr, 0,
                     MPI_BYTE, MPI_PROC_NULL, 0, win.comm, caller);
  weft::mpi::set_empty_status(&r->status);
  weft::mpi::finish(*r);
  *request = r;
  return MPI_SUCCESS;
}

// A committed type whose `count` elements are one run of count * size bytes at true_lb.
bool plain(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return false;
  const weft_mpi_datatype::Layout& l = *type->layout;
  return (l.predefined || l.committed.load(std::memory_order_relaxed)) && l.block_count <= 1 &&
         l.repeat == 1 && static_cast<std::size_t>(l.extent) == l.size;
}

// The way of most puts and gets, in one function: plain types on both sides, a target whose
// memory this rank maps, an epoch open toward it, the access inside its window. Returns false,
// having done nothing, for anything else (the general path then checks and reports).
bool move_directly(Window& win, std::byte* origin, int origin_count, MPI_Datatype origin_type,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_type, bool put) {
  if (origin_count < 0 || target_count < 0 || target_rank < 0 || target_rank >= win.size ||
      win.flavor == MPI_WIN_FLAVOR_DYNAMIC || !plain(origin_type) || !plain(target_type)) {
    return false;
  }
  const auto r = static_cast<std::size_t>(target_rank);
  const weft::mpi::rma::Epochs& e = win.epochs;
  const weft::mpi::rma::Target& t = win.targets[r];
  if (t.direct == nullptr || !(e.fence_open || e.lock_all || e.locks[r] != 0)) return false;
  const MPI_Aint target_bytes =
      static_cast<MPI_Aint>(target_count) * static_cast<MPI_Aint>(target_type->layout->size);
  const MPI_Aint first = target_disp * t.disp_unit + target_type->layout->true_lb;
  if (target_bytes > 0 && (first < t.direct_begin || first + target_bytes > t.direct_end)) {
    return false;
  }
  const std::size_t bytes =
      std::min(static_cast<std::size_t>(origin_count) * origin_type->layout->size,
               static_cast<std::size_t>(target_bytes));
  if (bytes == 0) return true;
  std::byte* here = origin + origin_type->layout->true_lb;
  std::byte* there = t.direct + first;
  weft::mpi::rma::move_local(put ? there : here, put ? here : there, bytes);
  return true;
}

int do_put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           std::string_view function) {
  if (int rc = check_win(win, function); rc != MPI_SUCCESS) return rc;
  if (move_directly(*win, static_cast<std::byte*>(const_cast<void*>(origin_addr)), origin_count,
                    origin_datatype, target_rank, target_disp, target_count, target_datatype,
                    true)) {
    return MPI_SUCCESS;
  }
  if (int rc = check_origin(*win, function, Buffer::origin, origin_count, origin_datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Place place;
  bool skip = false;
  if (int rc = check_target(*win, function, target_rank, target_disp, target_count, target_datatype,
                            place, skip);
      rc != MPI_SUCCESS || skip) {
    return rc;
  }
  const std::string error =
      weft::mpi::rma::put(origin_addr, static_cast<std::size_t>(origin_count), *origin_datatype,
                          place, static_cast<std::size_t>(target_count), *target_datatype);
  return error.empty() ? MPI_SUCCESS : failed_transfer(*win, function, error);
}

int do_get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           std::string_view function) {
  if (int rc = check_win(win, function); rc != MPI_SUCCESS) return rc;
  if (move_directly(*win, static_cast<std::byte*>(origin_addr), origin_count, origin_datatype,
                    target_rank, target_disp, target_count, target_datatype, false)) {
    return MPI_SUCCESS;
  }
  if (int rc = check_origin(*win, function, Buffer::origin, origin_count, origin_datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Place place;
  bool skip = false;
  if (int rc = check_target(*win, function, target_rank, target_disp, target_count, target_datatype,
                            place, skip);
      rc != MPI_SUCCESS || skip) {
    return rc;
  }
  const std::string error =
      weft::mpi::rma::get(origin_addr, static_cast<std::size_t>(origin_count), *origin_datatype,
                          place, static_cast<std::size_t>(target_count), *target_datatype);
  return error.empty() ? MPI_SUCCESS : failed_transfer(*win, function, error);
}

// Accumulate (result_addr null) and get-accumulate.
int do_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                  void* result_addr, int result_count, MPI_Datatype result_datatype,
                  int target_rank, MPI_Aint target_disp, int target_count,
                  MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, std::string_view function,
                  bool fetch) {
  if (int rc = check_win(win, function); rc != MPI_SUCCESS) return rc;
  // MPICH and Open MPI accumulate on MPI_CHAR as on MPI_SIGNED_CHAR, which reductions refuse
  // (MPI-4.1 6.9.2 lists no operation for it); programs written for them do so.
  for (MPI_Datatype* type : {&origin_datatype, &result_datatype, &target_datatype}) {
    if (*type == MPI_CHAR) *type = MPI_SIGNED_CHAR;
  }
  const bool no_op = op != MPI_OP_NULL && op->kind == weft::mpi::OpKind::no_op;
  if (!no_op || !fetch) {
    if (int rc = check_origin(*win, function, Buffer::origin, origin_count, origin_datatype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (fetch) {
    if (int rc = check_origin(*win, function, Buffer::result, result_count, result_datatype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  Place place;
  bool skip = false;
  if (int rc = check_target(*win, function, target_rank, target_disp, target_count, target_datatype,
                            place, skip);
      rc != MPI_SUCCESS || skip) {
    return rc;
  }
  const std::size_t count = static_cast<std::size_t>(target_count);
  const std::size_t bytes = count * target_datatype->size();
  // An operation that moves no data does nothing, whatever its types (MPICH's badrma).
  if (bytes == 0) return MPI_SUCCESS;
  if (int rc = check_accumulate(*win, function, op, no_op ? MPI_DATATYPE_NULL : origin_datatype,
                                target_datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<std::byte> operand;
  if (!no_op) {
    const std::size_t origin_bytes =
        static_cast<std::size_t>(origin_count) * origin_datatype->size();
    if (origin_bytes != bytes) {
      return raise(win, function, MPI_ERR_TYPE,
                   "the origin holds " + std::to_string(origin_bytes) + " bytes and the target " +
                       std::to_string(bytes) + ", expected as many elements on both sides");
    }
    operand.resize(bytes);
    weft::mpi::pack(origin_addr, static_cast<std::size_t>(origin_count), *origin_datatype,
                    operand.data());
  }
  std::vector<std::byte> old(fetch ? bytes : 0);
  const std::string error =
      weft::mpi::rma::accumulate(*win, target_rank, place, count, *target_datatype, op,
                                 operand.data(), fetch ? old.data() : nullptr);
  if (!error.empty()) return failed_transfer(*win, function, error);
  if (fetch) {
    weft::mpi::unpack(old.data(), bytes, result_addr, static_cast<std::size_t>(result_count),
                      *result_datatype);
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Win win) {
  return do_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                target_datatype, win, "MPI_Put");
}
WEFT_MPI_ALIAS(MPI_Put);

extern "C" int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Win win) {
  return do_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                target_datatype, win, "MPI_Get");
}
WEFT_MPI_ALIAS(MPI_Get);

extern "C" int PMPI_Accumulate(const void* origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                               int target_count, MPI_Datatype target_datatype, MPI_Op op,
                               MPI_Win win) {
  return do_accumulate(origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                       target_rank, target_disp, target_count, target_datatype, op, win,
                       "MPI_Accumulate", false);
}
WEFT_MPI_ALIAS(MPI_Accumulate);

extern "C" int PMPI_Get_accumulate(const void* origin_addr, int origin_count,
                                   MPI_Datatype origin_datatype, void* result_addr,
                                   int result_count, MPI_Datatype result_datatype, int target_rank,
                                   MPI_Aint target_disp, int target_count,
                                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return do_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                       result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                       win, "MPI_Get_accumulate", true);
}
WEFT_MPI_ALIAS(MPI_Get_accumulate);

extern "C" int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                                 int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  return do_accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp,
                       1, datatype, op, win, "MPI_Fetch_and_op", true);
}
WEFT_MPI_ALIAS(MPI_Fetch_and_op);

extern "C" int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                                     void* result_addr, MPI_Datatype datatype, int target_rank,
                                     MPI_Aint target_disp, MPI_Win win) {
  constexpr std::string_view function = "MPI_Compare_and_swap";
  if (int rc = check_win(win, function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_type(*win, function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (!datatype->predefined() || !weft::mpi::defined_for(MPI_BAND, datatype)) {
    return raise(win, function, MPI_ERR_TYPE,
                 "datatype is not an integer, logical or byte predefined type (MPI-4.1 12.3.4)");
  }
  Place place;
  bool skip = false;
  if (int rc = check_target(*win, function, target_rank, target_disp, 1, datatype, place, skip);
      rc != MPI_SUCCESS || skip) {
    return rc;
  }
  const std::string error = weft::mpi::rma::compare_and_swap(
      *win, target_rank, place, *datatype, compare_addr, origin_addr, result_addr);
  return error.empty() ? MPI_SUCCESS : failed_transfer(*win, function, error);
}
WEFT_MPI_ALIAS(MPI_Compare_and_swap);

extern "C" int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  if (int rc = check_win(win, "MPI_Rput"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_passive(*win, "MPI_Rput", target_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = do_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win, "MPI_Rput");
      rc != MPI_SUCCESS) {
    return rc;
  }
  return completed_request(*win, request, "MPI_Rput");
}
WEFT_MPI_ALIAS(MPI_Rput);

extern "C" int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  if (int rc = check_win(win, "MPI_Rget"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_passive(*win, "MPI_Rget", target_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = do_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win, "MPI_Rget");
      rc != MPI_SUCCESS) {
    return rc;
  }
  return completed_request(*win, request, "MPI_Rget");
}
WEFT_MPI_ALIAS(MPI_Rget);

extern "C" int PMPI_Raccumulate(const void* origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                                int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                MPI_Win win, MPI_Request* request) {
  if (int rc = check_win(win, "MPI_Raccumulate"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_passive(*win, "MPI_Raccumulate", target_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = do_accumulate(origin_addr, origin_count, origin_datatype, nullptr, 0,
                             MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                             target_datatype, op, win, "MPI_Raccumulate", false);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return completed_request(*win, request, "MPI_Raccumulate");
}
WEFT_MPI_ALIAS(MPI_Raccumulate);

extern "C" int PMPI_Rget_accumulate(const void* origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, void* result_addr,
                                    int result_count, MPI_Datatype result_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                    MPI_Request* request) {
  if (int rc = check_win(win, "MPI_Rget_accumulate"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_passive(*win, "MPI_Rget_accumulate", target_rank); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = do_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                             result_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win, "MPI_Rget_accumulate", true);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return completed_request(*win, request, "MPI_Rget_accumulate");
}
WEFT_MPI_ALIAS(MPI_Rget_accumulate);
