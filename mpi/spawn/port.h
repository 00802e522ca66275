// Ports (MPI-4.1 11.10.2): a port is a matching context that a rank opened, named with the
// rank's world rank. A connecting root sends its hello to that rank in the port's context; the
// two roots then agree on the new intercommunicator over a private pair of their own, and each
// spreads the outcome through its group. Every step is a point-to-point message, so ports work
// between the worlds of one process and between processes alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mpi.h"

namespace weft::mpi::ports {

struct Port {
  int owner = -1;  // world rank of the rank that opened it
  std::uint32_t context = 0;
};

std::string name_of(const Port& port);
// The port a name names; nothing for a name MPI_Open_port did not make.
std::optional<Port> parse(const char* name);

// What the roots of both sides learn when they meet: the other group and the contexts.
struct Agreement {
  std::vector<int> remote;    // the other group, world ranks in its rank order
  std::uint32_t context = 0;  // shared by both sides
};

// The two roots meet over the pair (acceptor, connector) in `pair_context`, each sending its
// group and a proposal for the shared context. Returns an MPI error class.
int agree(int acceptor, int connector, std::uint32_t pair_context, bool accepting,
          const std::vector<int>& group, Agreement& agreement);

// After the roots met (or failed): the root of `comm` spreads `rc` and the agreement through
// it, and every member takes its side. Returns an MPI error class; *newcomm is the new side or
// MPI_COMM_NULL.
int finish(MPI_Comm comm, int root, int tag, int rc, const Agreement& agreement, bool low,
           MPI_Comm* newcomm);

}  // namespace weft::mpi::ports
