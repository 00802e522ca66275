// The exchanges of the intercommunicator collectives (inter_collective.h), each a function of the
// call's tag returning an MPI error class. Inside a group they go through the side's hidden
// intracommunicator: a binomial tree for broadcasts, the group's rank 0 folding the members'
// inputs in rank order for reductions. Across the groups the data moves between the leaders
// (broadcast, reductions) or straight between the members (gathers, scatters, all-to-all).
#include "coll/inter_exchange.h"

#include <deque>
#include <vector>

#include "coll/spanning_exchange.h"
#include "comm/intercomm.h"
#include "op/op.h"

namespace weft::mpi::intercoll::steps {

namespace {

using collective::Block;
using collective::Scratch;
using spanning::Exchange;

// Broadcasts `count` elements at `buffer` from local rank 0 through the caller's group.
int local_bcast(MPI_Comm comm, void* buffer, std::size_t count, MPI_Datatype type, int tag) {
  const MPI_Comm group = inter::local_group(comm);
  const int n = group->size();
  const int me = group->my_rank();
  Exchange exchange(group, tag);
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if ((me & mask) != 0) {
      exchange.receive(me - mask, buffer, count, type);
      if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (me + mask < n) exchange.send(me + mask, buffer, count, type);
  }
  return exchange.wait();
}

// Folds every member's `input` (count elements) in rank order into `output` at local rank 0;
// `output` is ignored elsewhere.
int local_reduce(MPI_Comm comm, const void* input, void* output, std::size_t count,
                 MPI_Datatype type, MPI_Op op, int tag) {
  const MPI_Comm group = inter::local_group(comm);
  const int n = group->size();
  Exchange exchange(group, tag);
  if (group->my_rank() != 0) {
    exchange.send(0, input, count, type);
    return exchange.wait();
  }
  std::deque<Scratch> received;
  std::vector<const void*> inputs(static_cast<std::size_t>(n));
  inputs[0] = input;
  for (int r = 1; r < n; ++r) {
    received.emplace_back(count, *type);
    inputs[r] = received.back().data();
    exchange.receive(r, received.back().data(), count, type);
  }
  if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
  collective::fold(
      n, [&](int r) { return inputs[static_cast<std::size_t>(r)]; }, count, type, op, output);
  return MPI_SUCCESS;
}

// The reduction of the caller's group's inputs, swapped by the leaders for the other group's: on
// return local rank 0 holds the remote group's reduction in `remote` (count elements).
int leaders_swap_reductions(MPI_Comm comm, const void* input, void* remote, std::size_t count,
                            MPI_Datatype type, MPI_Op op, int tag) {
  Scratch mine(count, *type);
  if (int rc = local_reduce(comm, input, mine.data(), count, type, op, tag); rc != MPI_SUCCESS) {
    return rc;
  }
  if (comm->my_rank() != 0) return MPI_SUCCESS;
  Exchange exchange(comm, tag);
  exchange.send(0, mine.data(), count, type);
  exchange.receive(0, remote, count, type);
  return exchange.wait();
}

}  // namespace

int barrier(MPI_Comm comm, int tag) {
  // Every member of the group has arrived once rank 0 has heard from all; the leaders then tell
  // each other, and each tells its group.
  const MPI_Comm group = inter::local_group(comm);
  {
    Exchange exchange(group, tag);
    if (group->my_rank() != 0) {
      exchange.send(0, nullptr, 0, MPI_BYTE);
    } else {
      for (int r = 1; r < group->size(); ++r) exchange.receive(r, nullptr, 0, MPI_BYTE);
    }
    if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
  }
  if (comm->my_rank() == 0) {
    Exchange exchange(comm, tag);
    exchange.send(0, nullptr, 0, MPI_BYTE);
    exchange.receive(0, nullptr, 0, MPI_BYTE);
    if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
  }
  return local_bcast(comm, nullptr, 0, MPI_BYTE, tag);
}

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, int tag) {
  if (root == MPI_PROC_NULL) return MPI_SUCCESS;
  const auto n = static_cast<std::size_t>(count);
  if (root == MPI_ROOT) {
    Exchange exchange(comm, tag);
    exchange.send(0, buffer, n, type);
    return exchange.wait();
  }
  if (comm->my_rank() == 0) {
    Exchange exchange(comm, tag);
    exchange.receive(root, buffer, n, type);
    if (int rc = exchange.wait(); rc != MPI_SUCCESS) return rc;
  }
  return local_bcast(comm, buffer, n, type, tag);
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, int tag) {
  if (root == MPI_PROC_NULL) return MPI_SUCCESS;
  const auto n = static_cast<std::size_t>(count);
  if (root == MPI_ROOT) {
    Exchange exchange(comm, tag);
    exchange.receive(0, recvbuf, n, type);
    return exchange.wait();
  }
  Scratch reduced(n, *type);
  if (int rc = local_reduce(comm, sendbuf, reduced.data(), n, type, op, tag); rc != MPI_SUCCESS) {
    return rc;
  }
  if (comm->my_rank() != 0) return MPI_SUCCESS;
  Exchange exchange(comm, tag);
  exchange.send(root, reduced.data(), n, type);
  return exchange.wait();
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, int tag) {
  const auto n = static_cast<std::size_t>(count);
  if (int rc = leaders_swap_reductions(comm, sendbuf, recvbuf, n, type, op, tag);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return local_bcast(comm, recvbuf, n, type, tag);
}

int gather(const Block& send, const collective::Blocks& recv, int root, MPI_Comm comm, int tag) {
  if (root == MPI_PROC_NULL) return MPI_SUCCESS;
  Exchange exchange(comm, tag);
  if (root == MPI_ROOT) {
    for (int r = 0; r < comm->peer_count(); ++r) exchange.receive(r, recv.at(r));
  } else {
    exchange.send(root, send);
  }
  return exchange.wait();
}

int scatter(const collective::Blocks& send, const Block& recv, int root, MPI_Comm comm, int tag) {
  if (root == MPI_PROC_NULL) return MPI_SUCCESS;
  Exchange exchange(comm, tag);
  if (root == MPI_ROOT) {
    for (int r = 0; r < comm->peer_count(); ++r) exchange.send(r, send.at(r));
  } else {
    exchange.receive(root, recv);
  }
  return exchange.wait();
}

int alltoall(const collective::Blocks& send, const collective::Blocks& recv, MPI_Comm comm,
             int tag) {
  // Each member starts with a different remote rank, so that the sends spread over the group.
  Exchange exchange(comm, tag);
  const int m = comm->peer_count();
  const int first = comm->my_rank() % (m > 0 ? m : 1);
  for (int k = 0; k < m; ++k) exchange.receive((first + k) % m, recv.at((first + k) % m));
  for (int k = 0; k < m; ++k) exchange.send((first + k) % m, send.at((first + k) % m));
  return exchange.wait();
}

int reduce_scatter(const void* sendbuf, void* recvbuf, const std::vector<int>& counts,
                   MPI_Datatype type, MPI_Op op, MPI_Comm comm, int tag) {
  std::size_t total = 0;
  for (int c : counts) total += static_cast<std::size_t>(c);
  Scratch remote(total, *type);
  if (int rc = leaders_swap_reductions(comm, sendbuf, remote.data(), total, type, op, tag);
      rc != MPI_SUCCESS) {
    return rc;
  }
  // Rank 0 hands each member of its group its part of the remote group's reduction.
  const MPI_Comm group = inter::local_group(comm);
  Exchange exchange(group, tag);
  const std::size_t own =
      static_cast<std::size_t>(counts[static_cast<std::size_t>(group->my_rank())]);
  if (group->my_rank() != 0) {
    exchange.receive(0, recvbuf, own, type);
    return exchange.wait();
  }
  std::size_t offset = counts[0];
  for (int r = 1; r < group->size(); ++r) {
    const auto c = static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
    exchange.send(r, collective::element(remote.data(), offset, *type), c, type);
    offset += c;
  }
  if (own > 0) copy(remote.data(), own, *type, recvbuf, own, *type);
  return exchange.wait();
}

}  // namespace weft::mpi::intercoll::steps
