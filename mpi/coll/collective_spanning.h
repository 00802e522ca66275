// Collectives on a communicator whose members live in several processes. Their buffers are not
// all in this address space, so the members of each process meet and copy between one another's
// buffers as in collective.h, while one member per process, the head of its group, exchanges the
// group's data with the other heads as point-to-point messages in the communicator's collective
// context, tagged with the call's number, through the matching engine and the transport
// (collective_hierarchy.cpp, collective_hierarchy_all.cpp).
//
// Scan and Exscan stay linear (each member sends its input to every later member, which folds
// them in rank order), as do the reductions of a non-commutative operation whose processes'
// members interleave in rank order: folding each process's members first would break rank order.
// A nonblocking or persistent call runs the same exchange in a thread of the calling rank that
// completes the request, so it progresses while the caller computes.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "coll/collective.h"
#include "mpi.h"

namespace weft::mpi::spanning {

// Whether `comm` has members in other processes.
bool spans(MPI_Comm comm);

// The message tag of a call by its number on its communicator, and for a persistent call which
// start it is.
int tag_of(std::uint64_t number, std::uint64_t start);

// One call's exchange as a function of its message tag; returns an MPI error class.
using Body = std::function<int(int tag)>;

// Why a collective between processes failed with error class `rc`, for its message.
std::string_view failure_text(int rc);

// Runs `body` for the caller's next collective call on `comm` (blocking: now; else through a
// request written to *start.request) and raises what it returns on `comm`.
int run(MPI_Comm comm, std::string_view function, const collective::Start& start, Body body);

// The caller's own block of a gather or scatter: `count` elements of `type` at `buffer`, or an
// empty block (null address) for MPI_IN_PLACE.
collective::Block own_block(const void* buffer, int count, MPI_Datatype type);

int barrier(MPI_Comm comm, int tag);
int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, int tag);
// `send`: the caller's block (address null for MPI_IN_PLACE at the root); `recv`: the root's.
int gather(const collective::Block& send, const collective::Blocks& recv, int root, MPI_Comm comm,
           int tag);
// `recv`: the caller's block (address null for MPI_IN_PLACE at the root).
int scatter(const collective::Blocks& send, const collective::Block& recv, int root, MPI_Comm comm,
            int tag);
// `send` address null: MPI_IN_PLACE, the caller's block already in `recv`.
int allgather(const collective::Block& send, const collective::Blocks& recv, MPI_Comm comm,
              int tag);
int alltoall(const collective::Blocks& send, const collective::Blocks& recv, bool in_place,
             MPI_Comm comm, int tag);
int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, int tag);
int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, int tag);
// The caller gets elements [first, first + count) of the reduced `total` elements.
int reduce_scatter(const void* sendbuf, void* recvbuf, std::size_t first, std::size_t count,
                   std::size_t total, MPI_Datatype type, MPI_Op op, MPI_Comm comm, int tag);
// Inclusive (Scan) or exclusive (Exscan) prefix reduction.
int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         int tag, bool inclusive);

}  // namespace weft::mpi::spanning
