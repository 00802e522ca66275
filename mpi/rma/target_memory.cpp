#include "rma/target_memory.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "datatype/datatype_layout.h"
#include "rma/local_copy.h"

namespace weft::mpi::rma {

namespace {

// process_vm_readv/writev take at most IOV_MAX (1024) pieces a call.
constexpr std::size_t kPiecesPerCall = 1024;

// Moves `bytes` between `local` (contiguous) and the target's blocks `remote`, in order.
std::string move_remote(pid_t pid, std::byte* local, std::vector<iovec>& remote, bool write) {
  std::size_t done = 0;
  for (std::size_t first = 0; first < remote.size(); first += kPiecesPerCall) {
    const std::size_t n = std::min(kPiecesPerCall, remote.size() - first);
    std::size_t bytes = 0;
    for (std::size_t i = first; i < first + n; ++i) bytes += remote[i].iov_len;
    iovec mine{local + done, bytes};
    const ssize_t moved = write ? process_vm_writev(pid, &mine, 1, &remote[first], n, 0)
                                : process_vm_readv(pid, &mine, 1, &remote[first], n, 0);
    if (moved != static_cast<ssize_t>(bytes)) {
      return std::string(write ? "process_vm_writev" : "process_vm_readv") + " into process " +
             std::to_string(pid) +
             " failed: " + (moved < 0 ? std::strerror(errno) : "a partial transfer");
    }
    done += bytes;
  }
  return {};
}

std::vector<iovec> remote_blocks(const Place& target, std::size_t count, const Datatype& type,
                                 std::size_t limit) {
  std::vector<iovec> blocks;
  std::size_t total = 0;
  for_each_block(count, type, [&](MPI_Aint offset, std::size_t length) {
    if (total >= limit) return;
    length = std::min(length, limit - total);
    total += length;
    blocks.push_back({reinterpret_cast<void*>(target.address + offset), length});
  });
  return blocks;
}

}  // namespace

Span span_of(std::size_t count, const Datatype& type) {
  if (count == 0 || type.size() == 0) return {};
  const MPI_Aint steps = static_cast<MPI_Aint>(count - 1) * type.extent();
  return {type.true_lb() + std::min<MPI_Aint>(steps, 0),
          type.true_lb() + type.true_extent() + std::max<MPI_Aint>(steps, 0)};
}

std::string locate(const Window& win, int target, MPI_Aint disp, std::size_t count,
                   const Datatype& type, Place& place) {
  const Target& t = win.targets[static_cast<std::size_t>(target)];
  place.pid = t.pid;
  if (win.flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    // Displacements are addresses in the target's process (MPI_Get_address there).
    place.address = static_cast<std::uintptr_t>(disp);
    place.direct = t.same_process ? reinterpret_cast<std::byte*>(disp) : nullptr;
    return {};
  }
  const MPI_Aint offset = disp * t.disp_unit;
  const Span span = span_of(count, type);
  if (span.hi > span.lo && (offset + span.lo < 0 || offset + span.hi > t.size)) {
    return "target_disp = " + std::to_string(disp) + " (disp_unit " + std::to_string(t.disp_unit) +
           ") reaches bytes " + std::to_string(offset + span.lo) + ".." +
           std::to_string(offset + span.hi) + " of rank " + std::to_string(target) +
           "'s window, expected within its " + std::to_string(t.size) + " bytes";
  }
  place.address = t.address + static_cast<std::uintptr_t>(offset);
  // Wholly inside the bytes `direct` reaches, or by cross-memory attach.
  const bool reached =
      t.direct != nullptr && offset + span.lo >= t.direct_begin && offset + span.hi <= t.direct_end;
  place.direct = reached ? t.direct + offset : nullptr;
  return {};
}

void for_each_block(std::size_t count, const Datatype& type,
                    const std::function<void(MPI_Aint, std::size_t)>& f) {
  const weft_mpi_datatype::Layout& layout = *type.layout;
  // One run, without walking a large count element by element.
  if (type.contiguous()) {
    if (layout.block_count == 1 && count > 0) f(layout.blocks[0].offset, count * layout.size);
    return;
  }
  // Adjacent blocks (a contiguous type's elements) are handed over as one.
  MPI_Aint run_start = 0;
  std::size_t run_length = 0;
  for (std::size_t e = 0; e < count; ++e) {
    const MPI_Aint element = static_cast<MPI_Aint>(e) * layout.extent;
    for (std::size_t p = 0; p < layout.repeat; ++p) {
      const MPI_Aint period = element + static_cast<MPI_Aint>(p) * layout.stride;
      for (std::size_t b = 0; b < layout.block_count; ++b) {
        const MPI_Aint offset = period + layout.blocks[b].offset;
        const std::size_t length = layout.blocks[b].length;
        if (run_length > 0 && run_start + static_cast<MPI_Aint>(run_length) == offset) {
          run_length += length;
          continue;
        }
        if (run_length > 0) f(run_start, run_length);
        run_start = offset;
        run_length = length;
      }
    }
  }
  if (run_length > 0) f(run_start, run_length);
}

std::string put(const void* origin, std::size_t origin_count, const Datatype& origin_type,
                const Place& target, std::size_t target_count, const Datatype& target_type) {
  const std::size_t bytes =
      std::min(origin_count * origin_type.size(), target_count * target_type.size());
  if (bytes == 0) return {};
  if (target.local()) {
    if (origin_type.contiguous() && target_type.contiguous()) {
      move_local(target.direct + target_type.true_lb(),
                 static_cast<const std::byte*>(origin) + origin_type.true_lb(), bytes);
    } else {
      copy(origin, origin_count, origin_type, target.direct, target_count, target_type);
    }
    return {};
  }
  std::vector<iovec> blocks = remote_blocks(target, target_count, target_type, bytes);
  if (origin_type.contiguous()) {
    auto* data = static_cast<std::byte*>(const_cast<void*>(origin)) + origin_type.true_lb();
    return move_remote(target.pid, data, blocks, true);
  }
  std::vector<std::byte> packed(origin_count * origin_type.size());
  pack(origin, origin_count, origin_type, packed.data());
  return move_remote(target.pid, packed.data(), blocks, true);
}

std::string get(void* origin, std::size_t origin_count, const Datatype& origin_type,
                const Place& target, std::size_t target_count, const Datatype& target_type) {
  const std::size_t bytes =
      std::min(origin_count * origin_type.size(), target_count * target_type.size());
  if (bytes == 0) return {};
  if (target.local()) {
    if (origin_type.contiguous() && target_type.contiguous()) {
      move_local(static_cast<std::byte*>(origin) + origin_type.true_lb(),
                 target.direct + target_type.true_lb(), bytes);
    } else {
      copy(target.direct, target_count, target_type, origin, origin_count, origin_type);
    }
    return {};
  }
  std::vector<iovec> blocks = remote_blocks(target, target_count, target_type, bytes);
  if (origin_type.contiguous()) {
    return move_remote(target.pid, static_cast<std::byte*>(origin) + origin_type.true_lb(), blocks,
                       false);
  }
  std::vector<std::byte> packed(bytes);
  if (std::string error = move_remote(target.pid, packed.data(), blocks, false); !error.empty()) {
    return error;
  }
  unpack(packed.data(), bytes, origin, origin_count, origin_type);
  return {};
}

std::string read_remote(pid_t pid, std::uintptr_t address, void* out, std::size_t bytes) {
  std::vector<iovec> remote{{reinterpret_cast<void*>(address), bytes}};
  return move_remote(pid, static_cast<std::byte*>(out), remote, false);
}

std::string write_remote(pid_t pid, std::uintptr_t address, const void* in, std::size_t bytes) {
  std::vector<iovec> remote{{reinterpret_cast<void*>(address), bytes}};
  return move_remote(pid, static_cast<std::byte*>(const_cast<void*>(in)), remote, true);
}

}  // namespace weft::mpi::rma
