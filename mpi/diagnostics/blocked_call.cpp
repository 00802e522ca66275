#include "diagnostics/blocked_call.h"

#include "comm/communicator.h"
#include "request/request.h"

namespace weft::mpi {

namespace {

std::string rank_text(int peer) {
  if (peer == MPI_ANY_SOURCE) return "MPI_ANY_SOURCE";
  if (peer == MPI_PROC_NULL) return "MPI_PROC_NULL";
  return std::to_string(peer);
}

std::string tag_text(int tag) {
  return tag == MPI_ANY_TAG ? std::string("MPI_ANY_TAG") : std::to_string(tag);
}

std::string describe_request(const Request* request, int world_rank) {
  if (request == MPI_REQUEST_NULL) return "MPI_REQUEST_NULL";
  if (request->completion.done()) return "complete";
  const std::string comm = comm_name(request->comm, world_rank);
  switch (request->kind) {
    case RequestKind::send:
      return "send(dest=" + rank_text(request->peer) + ", tag=" + tag_text(request->tag) +
             ", comm=" + comm + ")";
    case RequestKind::recv:
      return "recv(source=" + rank_text(request->peer) + ", tag=" + tag_text(request->tag) +
             ", comm=" + comm + ")";
    case RequestKind::collective:
      return std::string(request->spanning_call.empty() ? "nonblocking collective"
                                                        : request->spanning_call) +
             "(comm=" + comm + ")";
    case RequestKind::generalized:
      return "generalized request";
  }
  return "request";
}

}  // namespace

std::string comm_name(MPI_Comm comm, int world_rank) {
  if (comm == MPI_COMM_NULL) return "MPI_COMM_NULL";
  const int member = world_rank >= 0 && world_rank < static_cast<int>(comm->rank_of_world.size())
                         ? comm->rank_of_world[static_cast<std::size_t>(world_rank)]
                         : -1;
  if (member >= 0 && member < static_cast<int>(comm->locals.size()) &&
      !comm->locals[static_cast<std::size_t>(member)].name.empty()) {
    return comm->locals[static_cast<std::size_t>(member)].name;
  }
  return "communicator " + std::to_string(comm->context);
}

BlockedCall blocked_in(BlockedCall::Kind kind, std::string_view function, MPI_Comm comm, int peer,
                       int tag) {
  BlockedCall call;
  call.kind = kind;
  call.name = function.data();
  call.size = function.size();
  call.comm = comm;
  call.peer = peer;
  call.tag = tag;
  return call;
}

BlockedCall blocked_on_requests(std::string_view function, const MPI_Request* requests, int count) {
  BlockedCall call;
  call.kind = BlockedCall::Kind::requests;
  call.name = function.data();
  call.size = function.size();
  call.requests = requests;
  call.count = count;
  for (int i = 0; i < count; ++i) {
    const Request* request = requests[i];
    if (request != MPI_REQUEST_NULL && request->kind == RequestKind::generalized) {
      call.generalized = true;
    }
  }
  return call;
}

std::string describe(const BlockedCall& call, int world_rank) {
  std::string text(call.name, call.size);
  const std::string comm = comm_name(call.comm, world_rank);
  switch (call.kind) {
    case BlockedCall::Kind::receive:
    case BlockedCall::Kind::probe:
      return text + "(source=" + rank_text(call.peer) + ", tag=" + tag_text(call.tag) +
             ", comm=" + comm + ")";
    case BlockedCall::Kind::send:
      return text + "(dest=" + rank_text(call.peer) + ", tag=" + tag_text(call.tag) +
             ", comm=" + comm + ")";
    case BlockedCall::Kind::collective:
      return text + "(comm=" + comm + ", collective #" + std::to_string(call.collective) + ")";
    case BlockedCall::Kind::requests: {
      text += "(" + std::to_string(call.count) + (call.count == 1 ? " request" : " requests");
      constexpr int kShown = 8;
      for (int i = 0; i < call.count && i < kShown; ++i) {
        text += std::string(i == 0 ? ": " : ", ") + "[" + std::to_string(i) + "] " +
                describe_request(call.requests[i], world_rank);
      }
      if (call.count > kShown) text += ", ...";
      return text + ")";
    }
  }
  return text;
}

bool provable(const BlockedCall& call) {
  return call.kind != BlockedCall::Kind::requests || !call.generalized;
}

}  // namespace weft::mpi
