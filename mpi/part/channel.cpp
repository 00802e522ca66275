#include "part/channel.h"

#include <string>

#include "comm/communicator.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft::mpi::part {

namespace {

char* byte_offset(void* buffer, MPI_Aint bytes) {
  return static_cast<char*>(buffer) + bytes;
}

// Runs `body` in a helper thread of the calling rank, on its core, at once.
void spawn_helper(int rank, std::function<void()> body) {
  ThreadAttr attr;
  attr.type = ThreadType::mpi_task;
  attr.rank = rank;
  const int vp = this_thread::vp();
  if (vp >= 0) attr.placement = Placement::pinned(vp);
  attr.run_at_once = true;
  spawn(attr, std::move(body)).detach();
}

}  // namespace

Channel::Channel(bool sender, const Layout& layout, const Caller& caller)
    : sender_(sender), layout_(layout), caller_(caller) {
  if (layout_.peer == MPI_PROC_NULL) return;
  if (sender_) {
    context_ = allocate_context();
    setup_ = Setup{context_, layout_.partitions,
                   static_cast<std::uint64_t>(layout_.count) * layout_.datatype->size()};
    unit_bytes_ = setup_.unit_bytes;
    const MPI_Aint extent = layout_.datatype->extent();
    for (int p = 0; p < layout_.partitions; ++p) {
      units_.push_back(make_unit(RequestKind::send,
                                 byte_offset(layout_.buffer, extent * layout_.count * p),
                                 layout_.count, layout_.datatype, p));
    }
    ready_ = std::vector<std::atomic<std::uint8_t>>(units_.size());
  }
  setup_request_ = std::make_unique<Request>();
  prepare(*setup_request_, sender_ ? RequestKind::send : RequestKind::recv, SendMode::standard,
          &setup_, sizeof(Setup), MPI_BYTE, layout_.peer, kSetupTag | layout_.tag, layout_.comm,
          caller_);
  setup_request_->context = layout_.comm->context + 1;
  weft::mpi::start(*setup_request_, sender_ ? "MPI_Psend_init" : "MPI_Precv_init");
}

Channel::~Channel() {
  if (setup_request_ == nullptr) return;
  if (sender_) {
    // A small eager message: done at once inside a process, soon between processes.
    wait(setup_request_->completion, world()->rank(caller_.world_rank).spin);
  } else if (!setup_request_->completion.done()) {
    // Never started, and its sender never came: withdraw the posted receive.
    world()->rank(caller_.world_rank).engine.cancel_recv(*setup_request_);
  }
}

std::unique_ptr<Request> Channel::make_unit(RequestKind kind, void* buffer, int count,
                                            MPI_Datatype datatype, int tag) {
  auto unit = std::make_unique<Request>();
  prepare(*unit, kind, SendMode::standard, buffer, count, datatype, layout_.peer, tag, layout_.comm,
          caller_);
  unit->context = context_;
  unit->persistent = true;
  return unit;
}

void Channel::start(Request& request, const std::shared_ptr<Channel>& self) {
  if (layout_.peer == MPI_PROC_NULL) {
    complete_proc_null(request);
    return;
  }
  active_.store(true, std::memory_order_release);
  if (sender_) {
    for (int p = 0; p < layout_.partitions; ++p) ready_[p].store(0, std::memory_order_relaxed);
    ready_count_.store(0, std::memory_order_relaxed);
    all_ready_.reset();
    for (auto& unit : units_) {
      unit->status = MPI_Status{};
      unit->completion.reset();
    }
    // The helper's spawn publishes the resets to it; MPI_Pready from other threads of the rank
    // follows MPI_Start in the program's own order (MPI-4.1 4.2).
    spawn_helper(caller_.world_rank, [this, self, &request] { watch_send(request); });
  } else {
    posted_.store(false, std::memory_order_relaxed);
    spawn_helper(caller_.world_rank, [this, self, &request] { watch_recv(request); });
  }
}

int Channel::ready(int partition, std::string_view function) {
  // acq_rel: the partition's data, written before MPI_Pready, goes with the claim.
  if (ready_[partition].exchange(1, std::memory_order_acq_rel) != 0) {
    return MPI_ERR_ARG;
  }
  Request& unit = *units_[static_cast<std::size_t>(partition)];
  const int rc = weft::mpi::start(unit, function);
  if (rc != MPI_SUCCESS) {
    unit.status.MPI_ERROR = rc;
    finish(unit);
  }
  // acq_rel: the helper woken by the last one sees every unit started.
  if (ready_count_.fetch_add(1, std::memory_order_acq_rel) + 1 == layout_.partitions) {
    all_ready_.complete();
  }
  return rc;
}

void Channel::watch_send(Request& request) {
  SpinBudget& budget = world()->rank(caller_.world_rank).spin;
  wait(all_ready_, budget);
  int error = MPI_SUCCESS;
  for (auto& unit : units_) {
    wait(unit->completion, budget);
    if (error == MPI_SUCCESS) error = unit->status.MPI_ERROR;
  }
  request.status.MPI_SOURCE = caller_.comm_rank;
  request.status.MPI_TAG = layout_.tag;
  request.status.MPI_ERROR = error;
  request.status.weft_bytes = static_cast<MPI_Count>(unit_bytes_ * units_.size());
  active_.store(false, std::memory_order_release);
  finish(request);
}

int Channel::plan_receives() {
  const std::uint64_t element = layout_.datatype->size();
  const std::uint64_t expected =
      static_cast<std::uint64_t>(layout_.partitions) * layout_.count * element;
  unit_bytes_ = setup_.unit_bytes;
  if (static_cast<std::uint64_t>(setup_.partitions) * unit_bytes_ != expected) {
    return MPI_ERR_TRUNCATE;
  }
  // A send partition is received as whole elements of the receive type.
  if (element != 0 && unit_bytes_ % element != 0) return MPI_ERR_TYPE;
  context_ = setup_.context;
  const std::uint64_t per_unit = element == 0 ? 0 : unit_bytes_ / element;
  const MPI_Aint extent = layout_.datatype->extent();
  for (int u = 0; u < setup_.partitions; ++u) {
    units_.push_back(
        make_unit(RequestKind::recv,
                  byte_offset(layout_.buffer, static_cast<MPI_Aint>(per_unit * u) * extent),
                  static_cast<int>(per_unit), layout_.datatype, u));
  }
  return MPI_SUCCESS;
}

void Channel::watch_recv(Request& request) {
  SpinBudget& budget = world()->rank(caller_.world_rank).spin;
  int error = MPI_SUCCESS;
  if (!planned_) {
    wait(setup_request_->completion, budget);
    error = setup_request_->status.MPI_ERROR;
    if (error == MPI_SUCCESS) error = plan_receives();
    planned_ = error == MPI_SUCCESS;
  }
  if (error == MPI_SUCCESS) {
    for (auto& unit : units_) {
      unit->status = MPI_Status{};
      unit->completion.reset();
      if (const int rc = weft::mpi::start(*unit, "MPI_Start"); rc != MPI_SUCCESS) {
        unit->status.MPI_ERROR = rc;
        finish(*unit);
      }
    }
    posted_.store(true, std::memory_order_release);
    for (auto& unit : units_) {
      wait(unit->completion, budget);
      if (error == MPI_SUCCESS) error = unit->status.MPI_ERROR;
    }
  }
  request.status.MPI_SOURCE = layout_.peer;
  request.status.MPI_TAG = layout_.tag;
  request.status.MPI_ERROR = error;
  request.status.weft_bytes =
      error == MPI_SUCCESS ? static_cast<MPI_Count>(unit_bytes_ * units_.size()) : 0;
  active_.store(false, std::memory_order_release);
  finish(request);
}

bool Channel::arrived(const Request& request, int partition) const {
  if (layout_.peer == MPI_PROC_NULL || !active()) return true;
  if (!posted_.load(std::memory_order_acquire)) return false;
  const std::uint64_t bytes = static_cast<std::uint64_t>(layout_.count) * layout_.datatype->size();
  std::uint64_t first = 0;
  std::uint64_t last = units_.size() - 1;
  if (bytes != 0 && unit_bytes_ != 0) {
    first = bytes * static_cast<std::uint64_t>(partition) / unit_bytes_;
    last = (bytes * (static_cast<std::uint64_t>(partition) + 1) - 1) / unit_bytes_;
  }
  for (std::uint64_t u = first; u <= last; ++u) {
    if (!units_[u]->completion.done()) return false;
  }
  // Once every partition has arrived, the request completes before this returns: a program
  // that saw them all may test the request once and expect it done. The helper, already woken
  // by the last message, only has to run.
  for (const auto& unit : units_) {
    if (!unit->completion.done()) return true;
  }
  while (!request.completion.done()) after_failed_test();
  return true;
}

Channel* channel_of(MPI_Request request) {
  if (request == MPI_REQUEST_NULL || request->kind != RequestKind::collective) return nullptr;
  Starter* starter = request->restart.target<Starter>();
  return starter != nullptr ? starter->channel.get() : nullptr;
}

}  // namespace weft::mpi::part
