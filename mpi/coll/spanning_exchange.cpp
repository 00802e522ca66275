#include "coll/spanning_exchange.h"

#include "init/world.h"
#include "request/completion.h"

namespace weft::mpi::spanning {

Exchange::Exchange(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {
  caller_.world_rank = caller_world_rank();
  caller_.comm_rank = comm->my_rank();
  caller_.state = &caller_state();
}

int Exchange::wait() {
  for (Posted& posted : posted_) {
    Request& request = posted.request;
    if (!request.completion.done()) weft::mpi::wait(request.completion, caller_.state->spin);
    if (request.status.MPI_ERROR != MPI_SUCCESS && failure_ == MPI_SUCCESS) {
      failure_ = request.status.MPI_ERROR;
    }
    if (posted.receive != kNotReceive) {
      received_[posted.receive] = static_cast<std::size_t>(request.status.weft_bytes);
    }
  }
  posted_.clear();
  return failure_;
}

void Exchange::post(RequestKind kind, int peer, const void* buffer, std::size_t count,
                    MPI_Datatype type) {
  Posted& posted = posted_.emplace_back();
  posted.receive = kind == RequestKind::recv ? received_.size() - 1 : kNotReceive;
  Request& request = posted.request;
  prepare(request, kind, SendMode::standard, buffer, static_cast<int>(count), type, peer, tag_,
          comm_, caller_);
  request.context = comm_->context + 1;
  if (int rc = start(request, "a collective between processes"); rc != MPI_SUCCESS) {
    posted_.pop_back();
    if (failure_ == MPI_SUCCESS) failure_ = rc;
  }
}

}  // namespace weft::mpi::spanning
