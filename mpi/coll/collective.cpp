#include "coll/collective.h"

#include <algorithm>
#include <string>

#include "errhan/error.h"
#include "pt2pt/p2p.h"

namespace weft::mpi::collective {

namespace {

// Below this many bytes per part, splitting a reduction among more members costs more in
// cross-core traffic than it saves in work.
constexpr std::size_t kMinPartBytes = 8 * 1024;
constexpr std::size_t kCacheLine = 64;

std::string bytes_text(std::size_t bytes) {
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

}  // namespace

int Start::check(MPI_Comm comm, std::string_view function) const {
  if (blocking()) return MPI_SUCCESS;
  return check_out(comm, function, "request", request);
}

Block Blocks::at(int peer) const {
  // Sides are published as const; see element().
  char* bytes = const_cast<char*>(static_cast<const char*>(base));
  if (offsets != nullptr) return {bytes + offsets[peer], offsets[peer + 1] - offsets[peer], type};
  if (types != nullptr) {
    return {bytes + displs[peer], static_cast<std::size_t>(counts[peer]), types[peer]};
  }
  if (counts != nullptr) {
    return {bytes + static_cast<std::ptrdiff_t>(displs[peer]) * type->extent(),
            static_cast<std::size_t>(counts[peer]), type};
  }
  return {element(base, static_cast<std::size_t>(peer) * static_cast<std::size_t>(count), *type),
          static_cast<std::size_t>(count), type};
}

void transfer(const Block& from, const Block& to) {
  if (from.count == 0 || to.count == 0) return;
  copy(from.address, from.count, *from.type, to.address, to.count, *to.type);
}

std::string Truncation::reason() const {
  if (from_rank_ < 0) return {};
  return "rank " + std::to_string(from_rank_) + " sent " + bytes_text(bytes_) +
         " where the receive count and type hold " + bytes_text(capacity_) +
         ", expected matching type signatures";
}

int Truncation::raise(MPI_Comm comm, std::string_view function) const {
  if (from_rank_ < 0) return MPI_SUCCESS;
  return mpi::raise(comm, function, MPI_ERR_TRUNCATE, reason());
}

std::string mismatch_reason(const Mismatch& mismatch) {
  auto side = [](int rank, std::size_t count, std::size_t bytes) {
    return "rank " + std::to_string(rank) + " passed " + std::to_string(count) +
           (count == 1 ? " element (" : " elements (") + bytes_text(bytes) + ")";
  };
  return side(mismatch.rank, mismatch.count, mismatch.bytes) + " but " +
         side(mismatch.reference, mismatch.expected_count, mismatch.expected_bytes) +
         ", expected the same count and datatype on every rank";
}

int raise_mismatch(MPI_Comm comm, std::string_view function, const Mismatch* mismatch) {
  if (mismatch == nullptr) return MPI_SUCCESS;
  return mpi::raise(comm, function, MPI_ERR_TRUNCATE, mismatch_reason(*mismatch));
}

bool agree(Call& call, int reference, bool report) {
  const std::optional<Mismatch> mismatch = find_mismatch(call, reference);
  if (mismatch && report) call.set_mismatch(*mismatch);
  return !mismatch;
}

Chunks::Chunks(std::size_t count, const Datatype& type, int members) : count_(count) {
  const MPI_Aint extent = type.extent();
  grain_ = extent > 0 && static_cast<std::size_t>(extent) < kCacheLine
               ? kCacheLine / static_cast<std::size_t>(extent)
               : 1;
  const std::size_t by_bytes = count * type.size() / kMinPartBytes;
  const std::size_t by_grain = (count + grain_ - 1) / grain_;
  parts_ = static_cast<int>(
      std::max<std::size_t>(1, std::min({by_bytes, by_grain, static_cast<std::size_t>(members)})));
}

std::size_t Chunks::begin(int part) const {
  if (part >= parts_) return count_;
  const std::size_t even =
      count_ * static_cast<std::size_t>(part) / static_cast<std::size_t>(parts_);
  return even / grain_ * grain_;
}

Scratch::Scratch(std::size_t count, const Datatype& type) {
  std::size_t bytes = 0;
  if (count > 0) {
    bytes = static_cast<std::size_t>(type.true_extent() +
                                     static_cast<MPI_Aint>(count - 1) * type.extent());
  }
  std::byte* memory = inline_;
  if (bytes > sizeof inline_) {
    heap_.reset(new std::byte[bytes]);
    memory = heap_.get();
  }
  // A buffer of `type` starts true_lb before its first byte of data.
  base_ = memory - type.true_lb();
}

int check_not_in_place(MPI_Comm comm, std::string_view function, std::string_view argument,
                       const void* buffer, std::string_view where) {
  if (buffer != MPI_IN_PLACE) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_BUFFER,
               std::string(argument) + " = MPI_IN_PLACE, which " + std::string(function) +
                   " accepts " + std::string(where));
}

int check_not_aliased(MPI_Comm comm, std::string_view function, const void* sendbuf,
                      const void* recvbuf, bool moves_data) {
  if (sendbuf != recvbuf || sendbuf == MPI_IN_PLACE || sendbuf == nullptr || !moves_data) {
    return MPI_SUCCESS;
  }
  return raise(comm, function, MPI_ERR_BUFFER,
               "sendbuf and recvbuf are the same buffer, expected distinct buffers (or "
               "MPI_IN_PLACE as sendbuf)");
}

int check_counts(MPI_Comm comm, std::string_view function, std::string_view argument,
                 const int* counts, int size) {
  if (counts == nullptr) {
    return raise(comm, function, MPI_ERR_ARG,
                 std::string(argument) + " = NULL, expected an array of " + std::to_string(size) +
                     " counts");
  }
  for (int r = 0; r < size; ++r) {
    if (counts[r] < 0) {
      return raise(comm, function, MPI_ERR_COUNT,
                   std::string(argument) + "[" + std::to_string(r) +
                       "] = " + std::to_string(counts[r]) + ", expected >= 0");
    }
  }
  return MPI_SUCCESS;
}

int check_displs(MPI_Comm comm, std::string_view function, std::string_view argument,
                 const int* displs) {
  if (displs != nullptr) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_ARG,
               std::string(argument) + " = NULL, expected an array of displacements");
}

int check_types(MPI_Comm comm, std::string_view function, std::string_view argument,
                const MPI_Datatype* types, const int* counts, int size) {
  if (types == nullptr) {
    return raise(comm, function, MPI_ERR_ARG,
                 std::string(argument) + " = NULL, expected an array of " + std::to_string(size) +
                     " datatypes");
  }
  for (int r = 0; r < size; ++r) {
    if (counts[r] == 0) continue;
    const std::string name = std::string(argument) + "[" + std::to_string(r) + "]";
    if (int rc = check_datatype(comm, function, name, types[r]); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int check_buffer_of(MPI_Comm comm, std::string_view function, std::string_view argument,
                    const void* buffer, const int* counts, int size, MPI_Datatype type) {
  long long total = 0;
  for (int r = 0; r < size; ++r) total += counts[r];
  const int clamped = static_cast<int>(std::min<long long>(total, 0x7fffffff));
  return check_buffer(comm, function, argument, buffer, clamped, type);
}

int check_op_on(MPI_Comm comm, std::string_view function, MPI_Op op, MPI_Datatype type) {
  if (int rc = check_op(comm, function, op); rc != MPI_SUCCESS) return rc;
  if (defined_for(op, type)) return MPI_SUCCESS;
  std::string type_name(type->name());
  return raise(comm, function, MPI_ERR_OP,
               "op = " + std::string(name(op)) + " is not defined on " +
                   (type_name.empty() ? std::string("this derived datatype") : type_name) +
                   ", expected an operation of MPI-3.1 5.9.2 for the type (or a user operation)");
}

}  // namespace weft::mpi::collective
