// Opening, closing and deleting files, and the calls on a whole file: its size, group, access
// mode, hints, sync and atomicity (MPI-4.1 14.2, 14.6.1).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "info/info.h"
#include "io/file.h"
#include "io/file_error.h"
#include "io/hints.h"
#include "util/profiling.h"
#include "weft/io.h"

using weft::mpi::io::check_file;
using weft::mpi::io::raise;

namespace weft::mpi::io {

const std::vector<int>& local_ranks(const File& file) {
  const Comm& comm = *file.comm;
  if (comm.spans_processes) return comm.groups.ranks[static_cast<std::size_t>(comm.groups.local)];
  // One process holds every member: the group is all of them.
  thread_local std::vector<int> all;
  all.resize(static_cast<std::size_t>(comm.size()));
  for (int i = 0; i < comm.size(); ++i) all[static_cast<std::size_t>(i)] = i;
  return all;
}

namespace {

// ROMIO names a file system before the path ("ufs:/tmp/x", "nfs:x"): the path is what follows.
std::string path_of(const char* filename) {
  std::string name(filename);
  const std::size_t colon = name.find(':');
  if (colon != std::string::npos && colon >= 2 && name.find('/') > colon) {
    static constexpr std::string_view kPrefixes[] = {"ufs",    "nfs",  "pvfs2",  "lustre",
                                                     "gpfs",   "xfs",  "panfs",  "daos",
                                                     "testfs", "gpfs", "beegfs", "bgfs"};
    const std::string prefix = name.substr(0, colon);
    for (std::string_view known : kPrefixes) {
      if (prefix == known) return name.substr(colon + 1);
    }
  }
  return name;
}

int check_amode(int amode, std::string& detail) {
  const int access = amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY);
  if (access != MPI_MODE_RDONLY && access != MPI_MODE_RDWR && access != MPI_MODE_WRONLY) {
    detail = "amode = " + std::to_string(amode) +
             ", expected exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and MPI_MODE_WRONLY";
    return MPI_ERR_AMODE;
  }
  if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)) != 0) {
    detail = "amode has MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
    return MPI_ERR_AMODE;
  }
  if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL) != 0) {
    detail = "amode has MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
    return MPI_ERR_AMODE;
  }
  constexpr int kKnown = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE |
                         MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                         MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
  if ((amode & ~kKnown) != 0) {
    detail = "amode = " + std::to_string(amode) + " has bits of no MPI_MODE_ constant";
    return MPI_ERR_AMODE;
  }
  return MPI_SUCCESS;
}

int open_flags(int amode, bool create) {
  int flags = O_CLOEXEC;
  if ((amode & MPI_MODE_RDONLY) != 0) flags |= O_RDONLY;
  if ((amode & MPI_MODE_WRONLY) != 0) flags |= O_WRONLY;
  if ((amode & MPI_MODE_RDWR) != 0) flags |= O_RDWR;
  if (create && (amode & MPI_MODE_CREATE) != 0) flags |= O_CREAT;
  if (create && (amode & MPI_MODE_EXCL) != 0) flags |= O_EXCL;
  return flags;
}

// open(2) through the I/O manager (a file on a slow or remote file system blocks in open).
int open_file(const std::string& path, int flags, int& error) {
  const int fd = weft::io::blocking_call([&] { return ::open(path.c_str(), flags, 0666); });
  error = fd < 0 ? errno : 0;
  return fd;
}

}  // namespace
}  // namespace weft::mpi::io

extern "C" int PMPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info,
                              MPI_File* fh) {
  using namespace weft::mpi::io;
  constexpr std::string_view kFunction = "MPI_File_open";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter()) {
    return weft::mpi::raise(comm, kFunction, MPI_ERR_COMM,
                            "comm is an intercommunicator, expected an intracommunicator");
  }
  if (fh == nullptr) return raise(MPI_FILE_NULL, kFunction, MPI_ERR_ARG, "fh = NULL");
  *fh = MPI_FILE_NULL;
  if (filename == nullptr) {
    return raise(MPI_FILE_NULL, kFunction, MPI_ERR_ARG, "filename = NULL, expected a path");
  }
  std::string detail;
  if (int rc = check_amode(amode, detail); rc != MPI_SUCCESS) {
    return raise(MPI_FILE_NULL, kFunction, rc, detail);
  }
  auto* file = new File;
  file->filename = path_of(filename);
  file->amode = amode;
  file->errhandler = default_errhandler();
  PMPI_Comm_dup(comm, &file->comm);
  // Errors of the file's own communicator are the file's: they return their class, and the
  // file's handler is called where they happen (see io/operation.cpp, nonblocking calls).
  PMPI_Comm_set_errhandler(file->comm, MPI_ERRORS_RETURN);
  PMPI_Comm_rank(file->comm, &file->rank);
  PMPI_Comm_size(file->comm, &file->size);
  // Rank 0 creates the file (alone, so that MPI_MODE_EXCL means one creator), then the others
  // open it; every rank learns the first failure, so all return the same class.
  int error = 0;
  if (file->rank == 0) file->fd = open_file(file->filename, open_flags(amode, true), error);
  PMPI_Bcast(&error, 1, MPI_INT, 0, file->comm);
  if (error == 0 && file->rank != 0) {
    file->fd = open_file(file->filename, open_flags(amode, false), error);
  }
  int first_error = 0;
  PMPI_Allreduce(&error, &first_error, 1, MPI_INT, MPI_MAX, file->comm);
  std::string shared_error;
  if (first_error == 0) {
    shared_error = file->shared_memory.create(file->comm, sizeof(std::atomic<MPI_Offset>));
  }
  if (first_error != 0 || !shared_error.empty()) {
    if (file->fd >= 0) ::close(file->fd);
    PMPI_Comm_free(&file->comm);
    delete file;
    if (!shared_error.empty()) {
      return raise(MPI_FILE_NULL, kFunction, MPI_ERR_OTHER,
                   "the shared file pointer's memory: " + shared_error);
    }
    const int own = error != 0 ? error : first_error;
    return raise(MPI_FILE_NULL, kFunction, class_of_errno(own),
                 errno_detail("opening", filename, own) + (error == 0 ? " (on another rank)" : ""));
  }
  file->shared_pointer = new (file->shared_memory.data()) std::atomic<MPI_Offset>(0);
  set(file->view, 0, MPI_BYTE, MPI_BYTE, "native");
  file->hints = initial_hints(info);
  if ((amode & MPI_MODE_APPEND) != 0) {
    struct stat st {};
    ::fstat(file->fd, &st);
    file->pointer = st.st_size;
    if (file->rank == 0) file->shared_pointer->store(st.st_size, std::memory_order_relaxed);
  }
  // The shared pointer's start is in place before any rank moves it.
  PMPI_Barrier(file->comm);
  *fh = file;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_open);

extern "C" int PMPI_File_close(MPI_File* fh) {
  constexpr std::string_view kFunction = "MPI_File_close";
  if (fh == nullptr) return raise(MPI_FILE_NULL, kFunction, MPI_ERR_ARG, "fh = NULL");
  if (int rc = check_file(*fh, kFunction); rc != MPI_SUCCESS) return rc;
  MPI_File file = *fh;
  // Nonblocking operations still running finish first (closing with pending requests is
  // erroneous, but their buffers must not be written after the descriptor is gone).
  if (file->last_operation) file->last_operation->wait();
  int error = 0;
  if (::close(file->fd) != 0) error = errno;
  file->fd = -1;
  // Every rank has stopped using the file and its shared pointer.
  PMPI_Barrier(file->comm);
  if ((file->amode & MPI_MODE_DELETE_ON_CLOSE) != 0 && file->rank == 0) {
    ::unlink(file->filename.c_str());
  }
  file->shared_memory.release();
  weft::mpi::io::set(file->view, 0, MPI_BYTE, MPI_BYTE, "native");  // drops the view's types
  PMPI_Comm_free(&file->comm);
  file->magic = weft_mpi_file::kClosed;
  *fh = MPI_FILE_NULL;
  if (error != 0) {
    return raise(MPI_FILE_NULL, kFunction, weft::mpi::io::class_of_errno(error),
                 weft::mpi::io::errno_detail("closing", file->filename, error));
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_close);

extern "C" int PMPI_File_delete(const char* filename, MPI_Info /*info*/) {
  constexpr std::string_view kFunction = "MPI_File_delete";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (filename == nullptr) {
    return raise(MPI_FILE_NULL, kFunction, MPI_ERR_ARG, "filename = NULL, expected a path");
  }
  const std::string path = weft::mpi::io::path_of(filename);
  const int rc = weft::io::blocking_call([&] { return ::unlink(path.c_str()); });
  if (rc != 0) {
    const int error = errno;
    return raise(MPI_FILE_NULL, kFunction, weft::mpi::io::class_of_errno(error),
                 weft::mpi::io::errno_detail("deleting", filename, error));
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_delete);

namespace {

int resize(MPI_File fh, MPI_Offset size, bool preallocate, std::string_view function) {
  if (int rc = check_file(fh, function); rc != MPI_SUCCESS) return rc;
  if (size < 0) {
    return raise(fh, function, MPI_ERR_ARG, "size = " + std::to_string(size) + ", expected >= 0");
  }
  if ((fh->amode & MPI_MODE_SEQUENTIAL) != 0) {
    return raise(fh, function, MPI_ERR_UNSUPPORTED_OPERATION,
                 "the file was opened with MPI_MODE_SEQUENTIAL");
  }
  if ((fh->amode & MPI_MODE_RDONLY) != 0) {
    return raise(fh, function, MPI_ERR_READ_ONLY, "the file was opened with MPI_MODE_RDONLY");
  }
  // One rank changes the size; the others wait, so that all see the new size on return.
  int error = 0;
  if (fh->rank == 0) {
    const int fd = fh->fd;
    error = weft::io::blocking_call([&] {
      if (preallocate) {
        struct stat st {};
        if (::fstat(fd, &st) != 0) return errno;
        if (st.st_size >= size) return 0;
        // posix_fallocate returns the error instead of setting errno.
        return ::posix_fallocate(fd, 0, size);
      }
      return ::ftruncate(fd, size) == 0 ? 0 : errno;
    });
  }
  PMPI_Bcast(&error, 1, MPI_INT, 0, fh->comm);
  if (error != 0) {
    return raise(fh, function, weft::mpi::io::class_of_errno(error),
                 weft::mpi::io::errno_detail(preallocate ? "preallocating" : "resizing",
                                             fh->filename, error));
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
  return resize(fh, size, false, "MPI_File_set_size");
}
WEFT_MPI_ALIAS(MPI_File_set_size);

extern "C" int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  return resize(fh, size, true, "MPI_File_preallocate");
}
WEFT_MPI_ALIAS(MPI_File_preallocate);

extern "C" int PMPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  constexpr std::string_view kFunction = "MPI_File_get_size";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (size == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "size = NULL");
  struct stat st {};
  if (::fstat(fh->fd, &st) != 0) {
    const int error = errno;
    return raise(fh, kFunction, weft::mpi::io::class_of_errno(error),
                 weft::mpi::io::errno_detail("fstat", fh->filename, error));
  }
  *size = st.st_size;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_size);

extern "C" int PMPI_File_get_group(MPI_File fh, MPI_Group* group) {
  constexpr std::string_view kFunction = "MPI_File_get_group";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (group == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "group = NULL");
  return PMPI_Comm_group(fh->comm, group);
}
WEFT_MPI_ALIAS(MPI_File_get_group);

extern "C" int PMPI_File_get_amode(MPI_File fh, int* amode) {
  constexpr std::string_view kFunction = "MPI_File_get_amode";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (amode == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "amode = NULL");
  *amode = fh->amode;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_amode);

extern "C" int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
  constexpr std::string_view kFunction = "MPI_File_set_info";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  weft::mpi::io::update_hints(*fh, info);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_set_info);

extern "C" int PMPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  constexpr std::string_view kFunction = "MPI_File_get_info";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (info_used == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "info_used = NULL");
  PMPI_Info_create(info_used);
  for (const auto& [key, value] : fh->hints) PMPI_Info_set(*info_used, key.c_str(), value.c_str());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_info);

extern "C" int PMPI_File_sync(MPI_File fh) {
  constexpr std::string_view kFunction = "MPI_File_sync";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if ((fh->amode & MPI_MODE_RDONLY) != 0) return MPI_SUCCESS;  // nothing written to flush
  const int fd = fh->fd;
  if (weft::io::blocking_call([fd] { return ::fsync(fd); }) != 0) {
    const int error = errno;
    return raise(fh, kFunction, weft::mpi::io::class_of_errno(error),
                 weft::mpi::io::errno_detail("fsync", fh->filename, error));
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_sync);

extern "C" int PMPI_File_set_atomicity(MPI_File fh, int flag) {
  constexpr std::string_view kFunction = "MPI_File_set_atomicity";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  // Collective: every rank switches before any rank's next access.
  PMPI_Barrier(fh->comm);
  fh->atomic = flag != 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_set_atomicity);

extern "C" int PMPI_File_get_atomicity(MPI_File fh, int* flag) {
  constexpr std::string_view kFunction = "MPI_File_get_atomicity";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (flag == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "flag = NULL");
  *flag = fh->atomic ? 1 : 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_atomicity);
