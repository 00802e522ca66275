#include "coll/nbc.h"

#include <utility>

#include "errhan/error.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "weft/trace.h"

namespace weft::mpi::nbc {

Instance::Instance(int size, std::string_view function)
    : size_(size), function_(function), members_(size) {}

Instance::~Instance() = default;

void Instance::arrive(int rank, int world_rank, Request* request) {
  members_[static_cast<std::size_t>(rank)] = {request, world_rank};
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == size_) start_work();
}

int Instance::outcome(int, std::string*) const {
  return MPI_SUCCESS;
}

void Instance::set_failure(int rank, std::string reason) {
  if (failures_ == nullptr) failures_.reset(new std::string[static_cast<std::size_t>(size_)]);
  failures_[rank] = std::move(reason);
}

std::string Instance::failure(int rank) const {
  return failures_ != nullptr ? failures_[rank] : std::string();
}

void Instance::start_work() {
  const Work work = plan();
  if (work.pieces == 0) {
    complete();
    return;
  }
  // Counted before any piece runs: a piece that finishes early must not see zero.
  remaining_.store(work.pieces, std::memory_order_relaxed);
  World& job = *world();
  const bool inline_work = work.bytes <= kInlineBytes;
  // The caller keeps the instance alive while it posts: the last piece may complete every
  // request, and their owners free them, before the loop ends.
  const std::shared_ptr<Instance> keep = shared_from_this();
  for (int i = 0; i < work.pieces; ++i) {
    ProgressThread* thread =
        inline_work ? nullptr
                    : job.progress_of(members_[static_cast<std::size_t>(home(i))].world_rank);
    if (thread == nullptr) {
      const trace::Span span(trace::Category::nbc, "nbc piece", static_cast<std::uint64_t>(i));
      run(i);
      piece_done();
      continue;
    }
    if (pieces_ == nullptr) pieces_.reset(new Piece[static_cast<std::size_t>(work.pieces)]);
    Piece& piece = pieces_[static_cast<std::size_t>(i)];
    piece.run = &Instance::run_posted;
    piece.instance = this;
    piece.index = i;
    thread->post(&piece);
  }
}

void Instance::run_posted(ProgressTask* task) {
  Piece* piece = static_cast<Piece*>(task);
  const trace::Span span(trace::Category::nbc, "nbc piece (progress thread)",
                         static_cast<std::uint64_t>(piece->index));
  piece->instance->run(piece->index);
  piece->instance->piece_done();
}

void Instance::piece_done() {
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) complete();
}

void Instance::complete() {
  finish();
  const std::shared_ptr<Instance> keep = shared_from_this();
  for (int r = 0; r < size_; ++r) {
    Request& request = *members_[static_cast<std::size_t>(r)].request;
    set_empty_status(&request.status);
    std::string reason;
    request.status.MPI_ERROR = outcome(r, &reason);
    if (request.status.MPI_ERROR != MPI_SUCCESS) set_failure(r, std::move(reason));
    // Its owner may reuse or free the request from here on.
    mpi::finish(request);
  }
}

Request* new_request(MPI_Comm comm) {
  const int world_rank = caller_world_rank();
  return new_request(comm, world_rank, comm->rank_of(world_rank));
}

Request* new_request(MPI_Comm comm, int world_rank, int comm_rank) {
  Caller caller;
  caller.world_rank = world_rank;
  caller.comm_rank = comm_rank;
  caller.state = &world()->rank(world_rank);
  Request* request = caller.state->requests.get();
  prepare(*request, RequestKind::collective, SendMode::standard, nullptr, 0, MPI_DATATYPE_NULL,
          MPI_PROC_NULL, 0, comm, caller);
  return request;
}

}  // namespace weft::mpi::nbc
