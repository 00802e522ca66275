// MPI_Publish_name, MPI_Unpublish_name, MPI_Lookup_name (MPI-4.1 11.10.3): one table of
// service names per job. In a job of one process it is a map in memory. The processes of a job
// share a file in /dev/shm instead, named after the key the job's processes agreed on at start
// (World::job_key) and removed when the job ends: a lookup must see what a rank of another
// process published, at any time, while every rank may be busy elsewhere, so no rank can serve
// the table. The file is read and rewritten whole under flock(2), which the I/O manager hands to
// a spare kernel thread when it would block.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "errhan/error.h"
#include "init/world.h"
#include "spawn/job_files.h"
#include "util/profiling.h"

namespace weft::mpi::names {

namespace {

using Table = std::map<std::string, std::string>;

// A table's text: one entry a line, "service\tport"; neither may hold a tab or a newline.
Table parse(const std::string& text) {
  Table table;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    const std::size_t tab = line.find('\t');
    if (tab != std::string::npos) table[line.substr(0, tab)] = line.substr(tab + 1);
    begin = end + 1;
  }
  return table;
}

std::string format(const Table& table) {
  std::string text;
  for (const auto& [service, port] : table) text += service + "\t" + port + "\n";
  return text;
}

class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) { locked_ = ::flock(fd_, LOCK_EX) == 0; }
  ~FileLock() {
    if (locked_) ::flock(fd_, LOCK_UN);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool locked() const { return locked_; }

 private:
  int fd_;
  bool locked_;
};

// The table of a job of one process.
struct InMemory {
  std::mutex lock;
  Table table;
  std::string job;  // the key of the job whose table it is
};

InMemory& in_memory() {
  static InMemory memory;
  return memory;
}

// Runs `change` on the job's table, under the table's lock; the table is written back when it
// returns true. An empty string, or why the table could not be reached.
template <class Change>
std::string with_table(Change change) {
  World& world = *weft::mpi::world();
  if (world.single_process()) {
    InMemory& memory = in_memory();
    std::lock_guard guard(memory.lock);
    // A new job in this process starts with an empty table.
    if (memory.job != world.job_key()) {
      memory.table.clear();
      memory.job = world.job_key();
    }
    change(memory.table);
    return {};
  }
  const std::string path = name_table_path(world.job_key());
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot open the job's name table " + path + ": " + std::strerror(errno);
  std::string failure;
  {
    FileLock lock(fd);
    if (!lock.locked()) {
      failure = "cannot lock the job's name table " + path + ": " + std::strerror(errno);
    } else {
      std::string text;
      char buffer[4096];
      for (off_t at = 0;;) {
        const ssize_t n = ::pread(fd, buffer, sizeof buffer, at);
        if (n <= 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
        at += n;
      }
      Table table = parse(text);
      if (change(table)) {
        const std::string out = format(table);
        if (::ftruncate(fd, 0) != 0 ||
            ::pwrite(fd, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size())) {
          failure = "cannot write the job's name table " + path + ": " + std::strerror(errno);
        }
      }
    }
  }
  ::close(fd);
  return failure;
}

bool printable(const char* text) {
  return text != nullptr && std::strpbrk(text, "\t\n") == nullptr;
}

int check(std::string_view function, const char* service_name, const char* port_name,
          bool port_in) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (!printable(service_name) || service_name[0] == '\0') {
    return raise(MPI_COMM_NULL, function, MPI_ERR_ARG,
                 "service_name is NULL, empty or holds a tab or a newline, expected a name");
  }
  if (port_name == nullptr || (port_in && !printable(port_name))) {
    return raise(MPI_COMM_NULL, function, MPI_ERR_ARG,
                 std::string("port_name is ") + (port_name == nullptr ? "NULL" : "not one line") +
                     ", expected " + (port_in ? "a port name" : "where to store the port name"));
  }
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace weft::mpi::names

namespace weft::mpi {

std::string name_table_path(const std::string& job_key) {
  return "/dev/shm/weft-names-" + job_key;
}

void remove_job_files(const std::string& job_key) {
  ::unlink(name_table_path(job_key).c_str());
}

}  // namespace weft::mpi

namespace names = weft::mpi::names;
using weft::mpi::raise;

extern "C" int PMPI_Publish_name(const char* service_name, MPI_Info, const char* port_name) {
  constexpr std::string_view kFunction = "MPI_Publish_name";
  if (int rc = names::check(kFunction, service_name, port_name, true); rc != MPI_SUCCESS) {
    return rc;
  }
  bool taken = false;
  const std::string failure = names::with_table([&](names::Table& table) {
    taken = table.count(service_name) != 0;
    if (!taken) table[service_name] = port_name;
    return !taken;
  });
  if (!failure.empty()) return raise(MPI_COMM_NULL, kFunction, MPI_ERR_INTERN, failure);
  if (taken) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_SERVICE,
                 std::string("service_name = \"") + service_name +
                     "\" is published already, expected a name no rank published");
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Publish_name);

extern "C" int PMPI_Unpublish_name(const char* service_name, MPI_Info, const char* port_name) {
  constexpr std::string_view kFunction = "MPI_Unpublish_name";
  if (int rc = names::check(kFunction, service_name, port_name, true); rc != MPI_SUCCESS) {
    return rc;
  }
  bool found = false;
  const std::string failure = names::with_table([&](names::Table& table) {
    const auto entry = table.find(service_name);
    found = entry != table.end() && entry->second == port_name;
    if (found) table.erase(entry);
    return found;
  });
  if (!failure.empty()) return raise(MPI_COMM_NULL, kFunction, MPI_ERR_INTERN, failure);
  if (!found) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_SERVICE,
                 std::string("service_name = \"") + service_name + "\" with port_name \"" +
                     port_name + "\" is not published, expected a name published with that port");
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Unpublish_name);

extern "C" int PMPI_Lookup_name(const char* service_name, MPI_Info, char* port_name) {
  constexpr std::string_view kFunction = "MPI_Lookup_name";
  if (int rc = names::check(kFunction, service_name, port_name, false); rc != MPI_SUCCESS) {
    return rc;
  }
  std::optional<std::string> port;
  const std::string failure = names::with_table([&](names::Table& table) {
    const auto entry = table.find(service_name);
    if (entry != table.end()) port = entry->second;
    return false;
  });
  if (!failure.empty()) return raise(MPI_COMM_NULL, kFunction, MPI_ERR_INTERN, failure);
  if (!port) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_NAME,
                 std::string("service_name = \"") + service_name +
                     "\" is not published, expected a name MPI_Publish_name published");
  }
  const std::size_t n = std::min(port->size(), static_cast<std::size_t>(MPI_MAX_PORT_NAME - 1));
  std::memcpy(port_name, port->data(), n);
  port_name[n] = '\0';
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Lookup_name);
