#include "errhan/error.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "comm/communicator.h"
#include "datatype/datatype.h"
#include "errhan/errhandler.h"
#include "errhan/error_text.h"
#include "init/fatal.h"
#include "init/world.h"
#include "weft/process_end.h"

namespace weft::mpi {

namespace {

struct ClassText {
  int error_class;
  std::string_view name;
  std::string_view description;
};

constexpr ClassText kClasses[] = {
    {MPI_SUCCESS, "MPI_SUCCESS", "no error"},
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER", "invalid buffer pointer or buffer too small"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT", "invalid count argument"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE", "invalid datatype"},
    {MPI_ERR_TAG, "MPI_ERR_TAG", "invalid tag"},
    {MPI_ERR_COMM, "MPI_ERR_COMM", "invalid communicator"},
    {MPI_ERR_RANK, "MPI_ERR_RANK", "invalid rank"},
    {MPI_ERR_ROOT, "MPI_ERR_ROOT", "invalid root"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP", "invalid group"},
    {MPI_ERR_OP, "MPI_ERR_OP", "invalid operation"},
    {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY", "invalid topology"},
    {MPI_ERR_DIMS, "MPI_ERR_DIMS", "invalid dimension argument"},
    {MPI_ERR_ARG, "MPI_ERR_ARG", "invalid argument"},
    {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN", "unknown error"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", "message truncated on receive"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER", "other error"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN", "internal error"},
    {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS", "error code is in status"},
    {MPI_ERR_PENDING, "MPI_ERR_PENDING", "pending request"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST", "invalid request"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS", "permission denied"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE", "invalid file access mode"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE", "invalid file name"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION", "data conversion error"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP", "data representation already registered"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS", "file exists"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE", "file in use"},
    {MPI_ERR_FILE, "MPI_ERR_FILE", "invalid file handle"},
    {MPI_ERR_IO, "MPI_ERR_IO", "I/O error"},
    {MPI_ERR_NAME, "MPI_ERR_NAME", "service name not published"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME", "arguments not the same on every rank"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE", "no space left on the device"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE", "no such file"},
    {MPI_ERR_PORT, "MPI_ERR_PORT", "invalid port name"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA", "quota exceeded"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY", "read-only file or file system"},
    {MPI_ERR_SERVICE, "MPI_ERR_SERVICE", "invalid service name"},
    {MPI_ERR_SPAWN, "MPI_ERR_SPAWN", "could not spawn processes"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    {MPI_ERR_WIN, "MPI_ERR_WIN", "invalid window"},
    {MPI_ERR_BASE, "MPI_ERR_BASE", "invalid base address"},
    {MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE", "invalid lock type"},
    {MPI_ERR_INFO, "MPI_ERR_INFO", "invalid info object"},
    {MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY", "info key too long"},
    {MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE", "info value too long"},
    {MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY", "no such info key"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "out of memory"},
    {MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL", "invalid attribute key"},
    {MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"},
    {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    {MPI_ERR_SIZE, "MPI_ERR_SIZE", "invalid size argument"},
    {MPI_ERR_DISP, "MPI_ERR_DISP", "invalid displacement argument"},
    {MPI_ERR_ASSERT, "MPI_ERR_ASSERT", "invalid assertion argument"},
    {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE", "target memory not in the window"},
    {MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
    {MPI_T_ERR_MEMORY, "MPI_T_ERR_MEMORY", "out of memory (tools interface)"},
    {MPI_T_ERR_NOT_INITIALIZED, "MPI_T_ERR_NOT_INITIALIZED",
     "the tools interface is not initialized"},
    {MPI_T_ERR_CANNOT_INIT, "MPI_T_ERR_CANNOT_INIT",
     "the tools interface cannot be initialized now"},
    {MPI_T_ERR_INVALID_INDEX, "MPI_T_ERR_INVALID_INDEX", "invalid tools interface index"},
    {MPI_T_ERR_INVALID_ITEM, "MPI_T_ERR_INVALID_ITEM", "invalid tools interface item"},
    {MPI_T_ERR_INVALID_HANDLE, "MPI_T_ERR_INVALID_HANDLE", "invalid tools interface handle"},
    {MPI_T_ERR_OUT_OF_HANDLES, "MPI_T_ERR_OUT_OF_HANDLES", "no more tools interface handles"},
    {MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T_ERR_OUT_OF_SESSIONS", "no more tools interface sessions"},
    {MPI_T_ERR_INVALID_SESSION, "MPI_T_ERR_INVALID_SESSION", "invalid tools interface session"},
    {MPI_T_ERR_CVAR_SET_NOT_NOW, "MPI_T_ERR_CVAR_SET_NOT_NOW",
     "control variable cannot be set now"},
    {MPI_T_ERR_CVAR_SET_NEVER, "MPI_T_ERR_CVAR_SET_NEVER", "control variable can no longer be set"},
    {MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T_ERR_PVAR_NO_STARTSTOP",
     "performance variable cannot be started or stopped"},
    {MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_ERR_PVAR_NO_WRITE",
     "performance variable cannot be written or reset"},
    {MPI_T_ERR_PVAR_NO_ATOMIC, "MPI_T_ERR_PVAR_NO_ATOMIC",
     "performance variable cannot be read and written atomically"},
    {MPI_T_ERR_INVALID_NAME, "MPI_T_ERR_INVALID_NAME", "no tools interface variable of that name"},
    {MPI_T_ERR_INVALID, "MPI_T_ERR_INVALID", "invalid use of the tools interface"},
    {MPI_ERR_SESSION, "MPI_ERR_SESSION", "invalid session"},
    {MPI_ERR_PROC_ABORTED, "MPI_ERR_PROC_ABORTED", "peer process aborted"},
    {MPI_ERR_VALUE_TOO_LARGE, "MPI_ERR_VALUE_TOO_LARGE", "value too large to store"},
    {MPI_T_ERR_NOT_SUPPORTED, "MPI_T_ERR_NOT_SUPPORTED", "not supported by the tools interface"},
    {MPI_ERR_ERRHANDLER, "MPI_ERR_ERRHANDLER", "invalid error handler"},
    {MPI_T_ERR_NOT_ACCESSIBLE, "MPI_T_ERR_NOT_ACCESSIBLE",
     "tools interface variable not accessible"},
};

const ClassText* find_class(int error_class) {
  for (const ClassText& c : kClasses) {
    if (c.error_class == error_class) return &c;
  }
  return nullptr;
}

// The communicator whose handler an error on `comm` goes to (MPI-3.1 8.3: errors not tied to a
// usable communicator go to MPI_COMM_WORLD's).
MPI_Comm handler_comm(MPI_Comm comm) {
  if (comm != MPI_COMM_NULL && comm->my_rank() >= 0 && !comm->local_of_caller().freed) {
    return comm;
  }
  return caller_world_comm();
}

// How messages name a communicator: its name, else "the communicator".
std::string comm_name(MPI_Comm comm) {
  if (comm != MPI_COMM_NULL && comm->my_rank() >= 0 && !comm->local_of_caller().name.empty()) {
    return comm->local_of_caller().name;
  }
  return "the communicator";
}

std::string range_text(int last) {
  return last < 0 ? std::string("nothing (the communicator is empty)")
                  : "0.." + std::to_string(last);
}

}  // namespace

std::string_view error_class_name(int error_class) {
  const ClassText* c = find_class(error_class);
  return c != nullptr ? c->name : "MPI_ERR_UNKNOWN";
}

std::string_view error_class_description(int error_class) {
  const ClassText* c = find_class(error_class);
  return c != nullptr ? c->description : std::string_view();
}

void end_job(std::string_view message, int status) noexcept {
  // One thread ends the process: another one's exit() may be flushing the streams already.
  weft::claim_process_end();
  std::fflush(nullptr);
  std::string line = "weft: ";
  line.append(message);
  line.push_back('\n');
  // One write(2), so that the line is not interleaved with another rank's output; the system call
  // itself, since libweft's write() may park a user thread waiting for the descriptor.
  ssize_t ignored = ::syscall(SYS_write, STDERR_FILENO, line.data(), line.size());
  (void)ignored;
  status &= 0xff;
  ::_exit(status == 0 ? 1 : status);
}

int raise(MPI_Comm comm, std::string_view function, int error_class, std::string_view detail) {
  const int rank = caller_world_rank();
  std::string message(function);
  message += " (rank " + std::to_string(rank) + "): ";
  message += error_class_name(error_class);
  message += ": ";
  message += detail;
  if (rank < 0 || world() == nullptr) end_job(message);
  MPI_Comm target = handler_comm(comm);
  const MPI_Errhandler handler = target->local_of_caller().errhandler;
  if (handler == MPI_ERRORS_RETURN) return error_class;
  // MPI_ERRORS_ABORT ends the processes of the communicator's group only; those of a weft job
  // share their fate (one process's end ends the job), so it ends the job as MPI_Abort does.
  if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRORS_ABORT ||
      handler == MPI_ERRHANDLER_NULL) {
    end_job(message);
  }
  int code = error_class;
  if (handler->fortran_function != nullptr) {
    MPI_Fint fortran_comm = MPI_Comm_c2f(target);
    handler->fortran_function(&fortran_comm, &code);
    return error_class;
  }
  handler->function(&target, &code);
  return error_class;
}

int check_initialized(std::string_view function) {
  return check_initialized(function, caller_world_rank());
}

int check_initialized(std::string_view function, int rank) {
  World* w = world();
  if (w == nullptr) {
    end_job(std::string(function) +
            " called outside an MPI job: start the program with weftrun (or weft::mpi::run_job)");
  }
  if (rank < 0) {
    end_job(std::string(function) +
            " called from a thread of no MPI rank: neither a rank nor a thread that a rank "
            "started (a thread made with weft::spawn must pass ThreadAttr::rank)");
  }
  switch (w->rank(rank).phase.load(std::memory_order_acquire)) {
    case RankState::Phase::initialized:
      return MPI_SUCCESS;
    case RankState::Phase::fresh:
      end_job(std::string(function) + " (rank " + std::to_string(rank) +
              "): called before MPI_Init or MPI_Init_thread");
    case RankState::Phase::finalized:
      break;
  }
  end_job(std::string(function) + " (rank " + std::to_string(rank) +
          "): called after MPI_Finalize");
}

int check_comm(MPI_Comm comm, std::string_view function) {
  return check_comm(comm, function, caller_world_rank());
}

int check_comm(MPI_Comm comm, std::string_view function, int world_rank) {
  if (comm == MPI_COMM_NULL) {
    return raise(comm, function, MPI_ERR_COMM, "comm = MPI_COMM_NULL, expected a communicator");
  }
  if (comm->rank_of(world_rank) < 0) {
    return raise(comm, function, MPI_ERR_COMM,
                 "the calling rank is not a member of the communicator, expected one it "
                 "belongs to");
  }
  if (comm->local_of(world_rank).freed) {
    return raise(comm, function, MPI_ERR_COMM,
                 "comm was freed by MPI_Comm_free, expected a live communicator");
  }
  return MPI_SUCCESS;
}

int check_count(MPI_Comm comm, std::string_view function, std::string_view argument, int count) {
  if (count >= 0) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_COUNT,
               std::string(argument) + " = " + std::to_string(count) + ", expected >= 0");
}

int check_datatype(MPI_Comm comm, std::string_view function, std::string_view argument,
                   MPI_Datatype datatype) {
  if (datatype == MPI_DATATYPE_NULL) {
    return raise(comm, function, MPI_ERR_TYPE,
                 std::string(argument) + " = MPI_DATATYPE_NULL, expected a datatype");
  }
  if (!datatype->predefined() && !datatype->committed()) {
    std::string name(datatype->name());
    return raise(comm, function, MPI_ERR_TYPE,
                 std::string(argument) + " = " + (name.empty() ? "a derived datatype" : name) +
                     " that is not committed, expected a committed one (MPI_Type_commit)");
  }
  return MPI_SUCCESS;
}

int check_buffer(MPI_Comm comm, std::string_view function, std::string_view argument,
                 const void* buffer, int count, MPI_Datatype datatype) {
  if (buffer != nullptr || count <= 0 || datatype->size() == 0) return MPI_SUCCESS;
  // A type built from absolute addresses (MPI_Get_address) is used with MPI_BOTTOM; its lowest
  // byte is then at an address no real object has in the first page.
  const MPI_Aint lowest = datatype->true_lb();
  if (!datatype->predefined() && (lowest >= 4096 || lowest <= -4096)) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_BUFFER,
               std::string(argument) + " = NULL with count = " + std::to_string(count) +
                   ", expected a buffer (or MPI_BOTTOM with a datatype of absolute addresses)");
}

int check_tag(MPI_Comm comm, std::string_view function, int tag, bool allow_any) {
  if ((tag >= 0 && tag <= kTagUpperBound) || (allow_any && tag == MPI_ANY_TAG)) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_TAG,
               "tag = " + std::to_string(tag) + ", expected 0.." + std::to_string(kTagUpperBound) +
                   " (MPI_TAG_UB)" + (allow_any ? " or MPI_ANY_TAG" : ""));
}

int check_rank(MPI_Comm comm, std::string_view function, std::string_view argument, int rank,
               bool allow_any) {
  // A collective's root must be a member; a point-to-point peer may also be MPI_PROC_NULL.
  const bool root = argument == "root";
  const int size = comm->peer_count();
  // An intercommunicator's root is a remote rank, or MPI_ROOT or MPI_PROC_NULL in the root's group.
  const bool inter_root = root && comm->is_inter() && (rank == MPI_ROOT || rank == MPI_PROC_NULL);
  if ((rank >= 0 && rank < size) || (!root && rank == MPI_PROC_NULL) ||
      (allow_any && rank == MPI_ANY_SOURCE) || inter_root) {
    return MPI_SUCCESS;
  }
  return raise(comm, function, root ? MPI_ERR_ROOT : MPI_ERR_RANK,
               std::string(argument) + " = " + std::to_string(rank) + ", expected " +
                   range_text(size - 1) + " (" + (comm->is_inter() ? "the remote group of " : "") +
                   comm_name(comm) + " has " + std::to_string(size) +
                   (size == 1 ? " rank)" : " ranks)") + (root ? "" : " or MPI_PROC_NULL") +
                   (allow_any ? " or MPI_ANY_SOURCE" : ""));
}

int check_op(MPI_Comm comm, std::string_view function, MPI_Op op) {
  if (op != MPI_OP_NULL) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_OP, "op = MPI_OP_NULL, expected an operation");
}

}  // namespace weft::mpi
