// Collective buffering between processes (ROMIO's two-phase I/O): the file range a collective
// call touches is cut into one domain per process, and the aggregator (head) of each process
// carries out every access inside its domain. Phase one moves the data: for a write, each head
// sends every other head the pieces of its process that fall in that head's domain (their file
// offsets, then their bytes); for a read, it sends the offsets it wants and gets the bytes back.
// Phase two is the I/O: each head moves its whole domain, pieces of every process merged by file
// offset, in large contiguous extents. The messages go through the transport, point-to-point
// in the file's communicator under tags of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "io/access.h"
#include "io/file.h"

namespace weft::mpi::io {

// The tag of round `round` (0..4) of the messages between heads in collective call `call`.
int message_tag(std::uint64_t call, int round);

// `pieces` cut at the boundaries of `count` file domains of equal size covering [low, high), by
// domain (a piece across a boundary is split, its memory with it).
std::vector<std::vector<Piece>> split_domains(const std::vector<Piece>& pieces, MPI_Offset low,
                                              MPI_Offset high, std::size_t count);

// Writes the pieces of the head's file domain, given by process in process order (the pieces
// of each in the order that process sent them); returns an errno or 0.
using DomainWriter = std::function<int(const std::vector<std::span<const Piece>>& by_process)>;

// Run by the head of each process with all its process's pieces (any order; the memory they
// point to stays valid until it returns); a write of its domain goes through `write_domain`.
// Returns an errno (0 when every process succeeded) and, for a read, the end of the file in
// `end`.
int two_phase(File& file, std::uint64_t call, const std::vector<Piece>& pieces, bool write,
              const DomainWriter& write_domain, MPI_Offset& end);

}  // namespace weft::mpi::io
