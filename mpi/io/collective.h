// Collective data access (MPI-4.1 14.4: the `_all` calls, and `_ordered` through them): one
// aggregator per NUMA node carries out the accesses of every rank of its process, each in its own
// file domain (one aggregator, the last rank to arrive, when the ranks share one node).
//
// The ranks of a process share the address space, so they hand their pieces to the aggregator
// without a message: each publishes its list of pieces (file offset, its own memory, length) in
// a meeting of the file's communicator, and the last rank to arrive merges all the lists by file
// offset and moves each contiguous extent of the file with one pwritev/preadv whose vectors point
// straight into the ranks' buffers (no copy). When the communicator spans processes, the head of
// each process aggregates its process and the heads exchange the data of their file domains
// (two_phase.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/access.h"
#include "io/file.h"

namespace weft::mpi::io {

// The caller's part in collective call number `call` of `file`: its `access` (pieces in stream
// order, or deferred). Returns the bytes of the caller's stream moved (a read stops at the end of
// the file), or -1 with `error` (an errno) set.
long long collective_transfer(File& file, std::uint64_t call, const Access& access, bool write,
                              int& error);

// Whether the calling rank's part in a collective access of `file` may be planned deferred
// (plan() with `defer`): a write through collective buffers with one aggregator for the process
// (one NUMA node), whose windows make the ranks' pieces as they go. Every other path makes them
// all (on the aggregator, for a rank that deferred anyway).
bool defers_pieces(const File& file, bool write);

}  // namespace weft::mpi::io
