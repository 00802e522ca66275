// MPI_Bcast. The root publishes its buffer and every member copies straight from it into its own:
// for a large buffer each reader copies its own, in parallel on all cores; for a small one the
// last member to arrive copies for everyone inside the final phase, so that nobody waits for the
// root's publication. Either way the final phase keeps the root's buffer valid until the last
// copy is done.
#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;
using collective::Block;
using collective::Call;

namespace {

struct BcastSide {
  Block data;
  bool copied = false;  // the member copied the root's data itself
  // Written by whoever copies into this member, read by it after the final phase.
  mutable collective::Truncation truncation;
};

}  // namespace

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Bcast";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_rank(comm, kFunction, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_count(comm, kFunction, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_not_in_place(comm, kFunction, "buffer", buffer, "nowhere");
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_buffer(comm, kFunction, "buffer", buffer, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }

  Call call(comm);
  const int size = call.size();
  BcastSide mine;
  mine.data = {buffer, static_cast<std::size_t>(count), datatype};
  const bool serial =
      mine.data.bytes() * static_cast<std::size_t>(size - 1) <= collective::kSerialCopyBytes;
  if (call.rank() != root && !serial) {
    const Block& from = call.of<BcastSide>(root).data;
    mine.truncation.check(root, from, mine.data);
    collective::transfer(from, mine.data);
    mine.copied = true;
  }
  call.publish(&mine);
  call.phase([&] {
    const Block& from = call.of<BcastSide>(root).data;
    for (int r = 0; r < size; ++r) {
      const BcastSide& side = call.of<BcastSide>(r);
      if (r == root || side.copied) continue;
      side.truncation.check(root, from, side.data);
      collective::transfer(from, side.data);
    }
  });
  return mine.truncation.raise(comm, kFunction);
}
WEFT_MPI_ALIAS(MPI_Bcast);
