#include "io/operation.h"

#include <cerrno>
#include <memory>
#include <string>
#include <utility>

#include "diagnostics/blocked_call.h"
#include "init/world.h"
#include "io/access.h"
#include "io/collective.h"
#include "io/file_error.h"
#include "request/helper_thread.h"
#include "request/request.h"
#include "weft/thread.h"

namespace weft::mpi::io {
namespace {

int check(MPI_File file, const Operation& op) {
  if (int rc = check_file(file, op.function); rc != MPI_SUCCESS) return rc;
  if (op.count < 0) {
    return raise(file, op.function, MPI_ERR_COUNT,
                 "count = " + std::to_string(op.count) + ", expected >= 0");
  }
  if (op.datatype == MPI_DATATYPE_NULL) {
    return raise(file, op.function, MPI_ERR_TYPE,
                 "datatype = MPI_DATATYPE_NULL, expected a datatype");
  }
  if (!op.datatype->committed()) {
    return raise(file, op.function, MPI_ERR_TYPE,
                 "datatype has not been committed (MPI_Type_commit)");
  }
  if (op.buffer == nullptr && op.count > 0 && op.datatype->size() > 0 &&
      op.datatype->true_lb() >= 0 && op.datatype->contiguous()) {
    return raise(file, op.function, MPI_ERR_BUFFER, "buf = NULL with count > 0");
  }
  if (op.write && (file->amode & MPI_MODE_RDONLY) != 0) {
    return raise(file, op.function, MPI_ERR_ACCESS,
                 "the file was opened with MPI_MODE_RDONLY: it cannot be written");
  }
  if (!op.write && (file->amode & MPI_MODE_WRONLY) != 0) {
    return raise(file, op.function, MPI_ERR_ACCESS,
                 "the file was opened with MPI_MODE_WRONLY: it cannot be read");
  }
  if (op.position != Position::shared && (file->amode & MPI_MODE_SEQUENTIAL) != 0) {
    return raise(file, op.function, MPI_ERR_UNSUPPORTED_OPERATION,
                 "the file was opened with MPI_MODE_SEQUENTIAL: only the shared file pointer "
                 "may be used");
  }
  if (op.position == Position::explicit_offset && op.offset < 0) {
    return raise(file, op.function, MPI_ERR_ARG,
                 "offset = " + std::to_string(op.offset) + ", expected >= 0");
  }
  const std::size_t bytes = static_cast<std::size_t>(op.count) * op.datatype->size();
  if (file->view.etype_size != 0 && bytes % file->view.etype_size != 0) {
    return raise(file, op.function, MPI_ERR_TYPE,
                 std::to_string(bytes) + " bytes of datatype are not a whole number of etypes (" +
                     std::to_string(file->view.etype_size) + " bytes each)");
  }
  return MPI_SUCCESS;
}

// Where the access starts in the view's data stream, in etypes; moves the file pointer the call
// names past the data requested.
MPI_Offset claim(MPI_File file, const Operation& op) {
  const MPI_Offset etypes =
      file->view.etype_size == 0
          ? 0
          : static_cast<MPI_Offset>(static_cast<std::size_t>(op.count) * op.datatype->size() /
                                    file->view.etype_size);
  switch (op.position) {
    case Position::explicit_offset:
      return op.offset;
    case Position::individual: {
      const MPI_Offset at = file->pointer;
      file->pointer += etypes;
      return at;
    }
    case Position::shared:
      // acq_rel: ranks of other processes move the same pointer through the shared memory.
      return file->shared_pointer->fetch_add(etypes, std::memory_order_acq_rel);
  }
  return 0;
}

// A planned access that runs now or on a helper thread.
struct Pending {
  MPI_File file;
  Operation op;
  Access access;
  std::uint64_t call = 0;  // collective call number
  long long moved = 0;
  int rc = MPI_SUCCESS;
};

int prepare(MPI_File file, const Operation& op, MPI_Offset at, Pending& pending) {
  pending.file = file;
  pending.op = op;
  if (op.collective) pending.call = file->collectives++;
  int error_class = MPI_SUCCESS;
  std::string error;
  if (!plan(*file, at * static_cast<MPI_Offset>(file->view.etype_size), op.buffer,
            static_cast<std::size_t>(op.count), op.datatype, op.write, pending.access, error_class,
            error, op.collective && defers_pieces(*file, op.write))) {
    return raise(file, op.function, error_class, error);
  }
  return MPI_SUCCESS;
}

// A collective call this rank cannot carry out (its arguments were refused, already raised):
// it still takes its place in the call, with no data, so that the other ranks do not wait for it
// forever. Nothing is done when the file itself is not usable.
void take_part_without_data(MPI_File file, const Operation& op, const Pending* prepared) {
  if (!op.collective || file == MPI_FILE_NULL || file->magic != File::kLive) return;
  const std::uint64_t call = prepared != nullptr ? prepared->call : file->collectives++;
  int error = 0;
  collective_transfer(*file, call, Access{}, op.write, error);
}

// The access itself; raises its error on the file's handler. Named in stack dumps and deadlock
// reports while it waits: for the disk, another rank's byte-range lock, or (collective) the
// other ranks of the file; a wait no proof covers.
int execute(Pending& p) {
  const BlockedCall call = blocked_named(p.op.function, nullptr, MPI_PROC_NULL);
  const BlockedScope blocked(call);
  int error = 0;
  if (p.op.collective) {
    p.moved = collective_transfer(*p.file, p.call, p.access, p.op.write, error);
  } else {
    p.moved = transfer_managed(*p.file, p.access.pieces, p.op.write);
    error = p.moved < 0 ? errno : 0;
  }
  if (p.moved < 0) {
    p.moved = 0;
    return raise(p.file, p.op.function, class_of_errno(error),
                 errno_detail(p.op.write ? "writing" : "reading", p.file->filename, error));
  }
  if (!p.op.write) {
    unstage(*p.file, p.access, p.op.buffer, static_cast<std::size_t>(p.op.count), p.op.datatype);
  }
  return MPI_SUCCESS;
}

}  // namespace

int run(MPI_File file, const Operation& op, MPI_Status* status) {
  if (int rc = check(file, op); rc != MPI_SUCCESS) {
    take_part_without_data(file, op, nullptr);
    return rc;
  }
  Pending pending;
  const MPI_Offset before = op.position == Position::individual ? file->pointer : 0;
  if (int rc = prepare(file, op, claim(file, op), pending); rc != MPI_SUCCESS) {
    take_part_without_data(file, op, &pending);
    return rc;
  }
  const int rc = execute(pending);
  // A read that met the end of the file moves the individual pointer past what it read only.
  if (op.position == Position::individual && file->view.etype_size != 0) {
    file->pointer = before + pending.moved / static_cast<long long>(file->view.etype_size);
  }
  set_status(status, pending.moved);
  return rc;
}

namespace {

int query(void* state, MPI_Status* status) {
  const auto& p = *static_cast<Pending*>(state);
  set_status(status, p.moved);
  return p.rc;
}
int free_pending(void* state) {
  const auto* p = static_cast<Pending*>(state);
  if (!p->op.datatype->predefined()) p->op.datatype->release();
  delete p;
  return MPI_SUCCESS;
}
int cancel(void*, int) {
  return MPI_SUCCESS;
}  // an access under way is not cancelled

}  // namespace

int start(MPI_File file, const Operation& op, MPI_Request* request) {
  int rc = request == nullptr ? raise(file, op.function, MPI_ERR_ARG, "request = NULL")
                              : check(file, op);
  if (rc != MPI_SUCCESS) {
    take_part_without_data(file, op, nullptr);
    return rc;
  }
  auto* pending = new Pending;
  if (rc = prepare(file, op, claim(file, op), *pending); rc != MPI_SUCCESS) {
    take_part_without_data(file, op, pending);
    delete pending;
    return rc;
  }
  // The program may free the datatype before the access ends.
  if (!op.datatype->predefined()) op.datatype->retain();
  PMPI_Grequest_start(query, free_pending, cancel, pending, request);
  // The wait that collects a failed access raises its class on the file's communicator, whose
  // handler returns it (MPI_File_open sets it so): the file's own handler was called when the
  // access failed, on the helper thread. A generalized request would go to MPI_COMM_WORLD's,
  // fatal by default, where a file's errors must return (MPI-4.1 9.3).
  (*request)->comm = file->comm;
  auto done = std::make_shared<Event>();
  std::shared_ptr<Event> previous = std::exchange(file->last_operation, done);
  const MPI_Request handle = *request;
  // Work-first: the helper starts the access at once and parks in the I/O manager's hand-off,
  // and the rank goes on computing while a spare kernel thread moves the data.
  spawn(helper_thread(caller_world_rank(), true), [pending, previous = std::move(previous), done,
                                                   handle] {
    if (previous) previous->wait();
    pending->rc = execute(*pending);
    done->set();
    PMPI_Grequest_complete(handle);
  }).detach();
  return MPI_SUCCESS;
}

int run_ordered(MPI_File file, const Operation& op, MPI_Status* status) {
  const int checked = check(file, op);
  if (checked != MPI_SUCCESS && (file == MPI_FILE_NULL || file->magic != File::kLive)) {
    return checked;
  }
  // Ranks take their places in rank order, from the shared pointer on; a rank whose arguments
  // were refused takes part with no data.
  const long long etypes =
      checked != MPI_SUCCESS
          ? 0
          : static_cast<long long>(static_cast<std::size_t>(op.count) * op.datatype->size() /
                                   (file->view.etype_size == 0 ? 1 : file->view.etype_size));
  long long before = 0, total = 0, base = 0;
  PMPI_Exscan(&etypes, &before, 1, MPI_LONG_LONG, MPI_SUM, file->comm);
  if (file->rank == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
  PMPI_Allreduce(&etypes, &total, 1, MPI_LONG_LONG, MPI_SUM, file->comm);
  if (file->rank == 0) base = file->shared_pointer->fetch_add(total, std::memory_order_acq_rel);
  PMPI_Bcast(&base, 1, MPI_LONG_LONG, 0, file->comm);
  Operation placed = op;
  placed.position = Position::explicit_offset;
  placed.collective = true;
  if (checked != MPI_SUCCESS) {
    take_part_without_data(file, placed, nullptr);
    return checked;
  }
  Pending pending;
  if (int rc = prepare(file, placed, base + before, pending); rc != MPI_SUCCESS) {
    take_part_without_data(file, placed, &pending);
    return rc;
  }
  const int rc = execute(pending);
  set_status(status, pending.moved);
  return rc;
}

}  // namespace weft::mpi::io
