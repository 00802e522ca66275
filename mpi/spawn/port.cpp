#include "spawn/port.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>

#include "coll/spanning_exchange.h"
#include "comm/communicator.h"
#include "comm/intercomm.h"
#include "diagnostics/blocked_call.h"
#include "errhan/error.h"
#include "group/group.h"
#include "info/info.h"
#include "init/world.h"
#include "util/profiling.h"

namespace weft::mpi::ports {

namespace {

constexpr std::string_view kPrefix = "weft-port:";
// The tags of a connecting root's hello in the port's collective context and of the roots'
// exchange on their pair: outside the collective calls' own (comm/intercomm.h).
constexpr int kHelloTag = (1 << 30) + 1;
constexpr int kAgreeTag = (1 << 30) + 2;

// The ports this process's ranks have open, so that MPI_Close_port can refuse others.
struct OpenPorts {
  std::mutex lock;
  std::set<std::string> names;
};

OpenPorts& open_ports() {
  static OpenPorts ports;
  return ports;
}

}  // namespace

std::string name_of(const Port& port) {
  return std::string(kPrefix) + std::to_string(port.owner) + ":" + std::to_string(port.context);
}

std::optional<Port> parse(const char* name) {
  if (name == nullptr || std::strncmp(name, kPrefix.data(), kPrefix.size()) != 0) return {};
  Port port;
  unsigned context = 0;
  int used = 0;
  if (std::sscanf(name + kPrefix.size(), "%d:%u%n", &port.owner, &context, &used) != 2 ||
      name[kPrefix.size() + static_cast<std::size_t>(used)] != '\0' || port.owner < 0) {
    return {};
  }
  port.context = context;
  return port;
}

int agree(int acceptor, int connector, std::uint32_t pair_context, bool accepting,
          const std::vector<int>& group, Agreement& agreement) {
  // A communicator of the two roots, private to this meeting: its context is new in the job.
  Comm pair({acceptor, connector}, pair_context, 0);
  define_in_trace(pair);
  std::vector<int> out{static_cast<int>(allocate_context())};
  out.insert(out.end(), group.begin(), group.end());
  std::vector<int> in;
  const int rc = inter::swap(&pair, accepting ? 1 : 0, kAgreeTag, out, in);
  if (rc != MPI_SUCCESS) return rc;
  if (in.size() < 2) return MPI_ERR_INTERN;
  agreement.context = static_cast<std::uint32_t>(std::max(out[0], in[0]));
  agreement.remote.assign(in.begin() + 1, in.end());
  return MPI_SUCCESS;
}

int finish(MPI_Comm comm, int root, int tag, int rc, const Agreement& agreement, bool low,
           MPI_Comm* newcomm) {
  // {class, shared context, this side's local context, the other group...}
  std::vector<int> info;
  if (comm->my_rank() == root) {
    info = {rc, static_cast<int>(agreement.context), static_cast<int>(allocate_context())};
    info.insert(info.end(), agreement.remote.begin(), agreement.remote.end());
  }
  int result = inter::bcast_ints(comm, root, tag, info);
  if (result == MPI_SUCCESS && info.size() < 3) result = MPI_ERR_INTERN;
  if (result == MPI_SUCCESS) result = info[0];
  *newcomm = MPI_COMM_NULL;
  if (result != MPI_SUCCESS) return result;
  *newcomm = inter::adopt_side(members_of(comm), std::vector<int>(info.begin() + 3, info.end()),
                               static_cast<std::uint32_t>(info[1]),
                               static_cast<std::uint32_t>(info[2]), low);
  return MPI_SUCCESS;
}

namespace {

std::string port_problem(const char* port_name) {
  return std::string("port_name = \"") + (port_name != nullptr ? port_name : "(null)") +
         "\", expected a name MPI_Open_port gave";
}

}  // namespace

}  // namespace weft::mpi::ports

using weft::mpi::raise;
namespace ports = weft::mpi::ports;

extern "C" int PMPI_Open_port(MPI_Info, char* port_name) {
  constexpr std::string_view kFunction = "MPI_Open_port";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (port_name == nullptr) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_ARG,
                 "port_name = NULL, expected MPI_MAX_PORT_NAME characters to write the name to");
  }
  const std::string name =
      ports::name_of({weft::mpi::caller_world_rank(), weft::mpi::allocate_context()});
  {
    ports::OpenPorts& open = ports::open_ports();
    std::lock_guard guard(open.lock);
    open.names.insert(name);
  }
  std::memcpy(port_name, name.c_str(), name.size() + 1);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Open_port);

extern "C" int PMPI_Close_port(const char* port_name) {
  constexpr std::string_view kFunction = "MPI_Close_port";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  ports::OpenPorts& open = ports::open_ports();
  std::lock_guard guard(open.lock);
  if (port_name == nullptr || open.names.erase(port_name) == 0) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_PORT,
                 ports::port_problem(port_name) + " and did not close yet");
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Close_port);

namespace {

// MPI_Comm_accept (`accepting`) and MPI_Comm_connect, at every member of `comm`: the two roots
// meet in the port's context (the connecting root says hello with its world rank and a new
// context for the pair), agree on the intercommunicator, and each spreads the outcome through
// its group.
int meet_at_port(std::string_view function, const char* port_name, int root, MPI_Comm comm,
                 MPI_Comm* newcomm, bool accepting) {
  if (int rc = weft::mpi::inter::check_rooted_creation(function, comm, root, newcomm, "newcomm");
      rc != MPI_SUCCESS) {
    return rc;
  }
  // The other side may be another job that never comes: a named wait, never proven.
  const weft::mpi::BlockedCall call = weft::mpi::blocked_named(function, "root", root, comm);
  const weft::mpi::BlockedScope blocked(call);
  const int tag = weft::mpi::inter::next_call_tag(comm);
  int rc = MPI_SUCCESS;
  std::string problem;
  ports::Agreement agreement;
  if (comm->my_rank() == root) {
    const std::optional<ports::Port> port = ports::parse(port_name);
    const int me = weft::mpi::caller_world_rank();
    if (!port || (accepting && port->owner != me)) {
      rc = MPI_ERR_PORT;
      problem = ports::port_problem(port_name) + (accepting ? " to the root" : "");
    } else {
      // The hello: the connecting root's world rank and the context of the pair.
      int hello[2] = {-1, 0};
      if (accepting) {
        weft::mpi::Comm listener({me}, port->context, 0);
        weft::mpi::spanning::Exchange exchange(&listener, ports::kHelloTag);
        exchange.receive(MPI_ANY_SOURCE, hello, 2, MPI_INT);
        rc = exchange.wait();
      } else {
        hello[0] = me;
        hello[1] = static_cast<int>(weft::mpi::allocate_context());
        weft::mpi::Comm caller({port->owner, me}, port->context, 0);
        weft::mpi::spanning::Exchange exchange(&caller, ports::kHelloTag);
        exchange.send(0, hello, 2, MPI_INT);
        rc = exchange.wait();
      }
      if (rc == MPI_SUCCESS) {
        rc = ports::agree(accepting ? me : port->owner, accepting ? hello[0] : me,
                          static_cast<std::uint32_t>(hello[1]), accepting,
                          weft::mpi::members_of(comm), agreement);
      }
      if (rc != MPI_SUCCESS) {
        problem = accepting ? "the meeting with the connecting root failed"
                            : "the meeting with the accepting root failed";
      }
    }
  }
  const int result = ports::finish(comm, root, tag, rc, agreement, accepting, newcomm);
  if (result == MPI_SUCCESS) return MPI_SUCCESS;
  if (problem.empty()) {
    problem = "the root (rank " + std::to_string(root) + ") could not " +
              (accepting ? "accept" : "connect");
  }
  return raise(comm, function, result, problem);
}

}  // namespace

extern "C" int PMPI_Comm_accept(const char* port_name, MPI_Info, int root, MPI_Comm comm,
                                MPI_Comm* newcomm) {
  return meet_at_port("MPI_Comm_accept", port_name, root, comm, newcomm, true);
}
WEFT_MPI_ALIAS(MPI_Comm_accept);

extern "C" int PMPI_Comm_connect(const char* port_name, MPI_Info, int root, MPI_Comm comm,
                                 MPI_Comm* newcomm) {
  return meet_at_port("MPI_Comm_connect", port_name, root, comm, newcomm, false);
}
WEFT_MPI_ALIAS(MPI_Comm_connect);
