#include "diagnostics/blocked_call.h"

#include <functional>

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

BlockedCall blocked_named(std::string_view function, const char* peer_label, int peer,
                          MPI_Comm comm) {
  BlockedCall call;
  call.kind = BlockedCall::Kind::named;
  call.name = function.data();
  call.size = function.size();
  call.peer_label = peer_label;
  call.peer = peer;
  call.comm = comm;
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
      call.program_completed = true;
    }
  }
  return call;
}

std::string describe(const BlockedCall& call, int world_rank, const std::function<bool()>& stays) {
  std::string text(call.name, call.size);
  if (!stays()) return text;
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
        // The array lives in the owner's frame: a pointer read from it is followed only once the
        // owner is known to have stayed in the call after the read.
        const Request* request = call.requests[i];
        if (!stays()) return text + ", ...)";
        text += std::string(i == 0 ? ": " : ", ") + "[" + std::to_string(i) + "] " +
                describe_request(request, world_rank);
      }
      if (call.count > kShown) text += ", ...";
      return text + ")";
    }
    case BlockedCall::Kind::named: {
      std::string arguments;
      if (call.peer_label != nullptr) {
        arguments = std::string(call.peer_label) + "=" + rank_text(call.peer);
      }
      if (call.comm != MPI_COMM_NULL) {
        arguments += (arguments.empty() ? "comm=" : ", comm=") + comm;
      }
      return text + "(" + arguments + ")";
    }
  }
  return text;
}

std::optional<BlockedCall> read_record(const ThreadSnapshot& thread) {
  BlockedCall call;
  if (thread.wait_note != nullptr) {
    if (!copy_note(thread, thread.wait_note, &call, sizeof call)) return std::nullopt;
    return call;
  }
  // Not parked: only a named record of plain values is kept (none of its pointers is followed).
  if (!copy_note(thread, thread.running_note, &call, sizeof call) ||
      call.kind != BlockedCall::Kind::named || call.comm != MPI_COMM_NULL) {
    return std::nullopt;
  }
  return call;
}

bool provable(const BlockedCall& call) {
  if (call.kind == BlockedCall::Kind::named) return false;
  return !call.program_completed;
}

}  // namespace weft::mpi
