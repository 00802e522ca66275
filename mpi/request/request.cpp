#include "request/request.h"

#include <mutex>
#include <new>

#include "init/world.h"

namespace weft::mpi {

void prepare(Request& request, RequestKind kind, SendMode mode, const void* buffer, int count,
             MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, const Caller& caller) {
  request.kind = kind;
  request.mode = mode;
  request.buffer = const_cast<void*>(buffer);
  request.count = count;
  request.datatype = datatype != MPI_DATATYPE_NULL ? datatype : MPI_BYTE;  // count 0 only
  request.keep.hold({{request.datatype, MPI_DATATYPE_NULL}, MPI_OP_NULL});
  request.peer = peer;
  request.tag = tag;
  request.comm = comm;
  request.context = comm->context;
  request.owner = caller.world_rank;
  request.source = caller.comm_rank;
  request.status = MPI_Status{};
  request.queued_key = 0;
  request.spanning_call = {};
  request.transport_failure = {};
}

void finish(Request& request) {
  if (request.bsend_block != nullptr) {
    // An internal Bsend send: nobody waits for it; its part of the attached buffer is free now.
    world()->rank(request.owner).bsend.release(request.bsend_block);
    dispose(&request);
    return;
  }
  if (request.completion.complete()) dispose(&request);
}

RequestPool::~RequestPool() {
  while (free_ != nullptr) {
    Request* next = free_->next;
    delete free_;
    free_ = next;
  }
}

Request* RequestPool::get() {
  Request* request = nullptr;
  {
    std::lock_guard lock(lock_);
    if (free_ != nullptr) {
      request = free_;
      free_ = request->next;
      --free_count_;
    }
  }
  if (request == nullptr) {
    request = new Request;
  } else {
    request->~Request();
    new (request) Request;
  }
  request->pool = this;
  return request;
}

void RequestPool::put(Request* request) {
  {
    std::lock_guard lock(lock_);
    if (free_count_ < kMaxFree) {
      request->next = free_;
      free_ = request;
      ++free_count_;
      return;
    }
  }
  delete request;
}

void dispose(Request* request) {
  request->narrowed_arrays.reset();
  request->keep.reset();
  if (request->pool != nullptr) request->pool->put(request);
}

}  // namespace weft::mpi
