#include "spawn/program_start.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <utility>

#include "comm/communicator.h"
#include "info/info.h"
#include "init/world.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/thread.h"

namespace weft::mpi {

namespace {

struct LoaderSlot {
  std::mutex lock;
  ProgramLoader loader;
};

LoaderSlot& loader_slot() {
  static LoaderSlot slot;
  return slot;
}

}  // namespace

void set_program_loader(ProgramLoader loader) {
  LoaderSlot& slot = loader_slot();
  std::lock_guard guard(slot.lock);
  slot.loader = std::move(loader);
}

}  // namespace weft::mpi

namespace weft::mpi::spawning {

namespace {

bool is_regular_file(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = text.find(separator, begin);
    const std::string part = text.substr(begin, end - begin);
    if (!part.empty()) parts.push_back(part);
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

std::string join_path(const std::string& directory, const std::string& name) {
  return directory.back() == '/' ? directory + name : directory + "/" + name;
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "localhost";
  return host;
}

// `soft` lists counts as a, a:b or a:b:stride, separated by commas (MPI-4.1 11.8.4).
bool valid_soft(const std::string& text) {
  if (text.empty()) return false;
  for (const std::string& item : split(text, ',')) {
    const std::vector<std::string> fields = split(item, ':');
    if (fields.empty() || fields.size() > 3) return false;
    for (const std::string& field : fields) {
      if (field.find_first_not_of("0123456789") != std::string::npos) return false;
    }
  }
  return true;
}

}  // namespace

const std::string* info_value(MPI_Info info, const std::string& key) {
  if (info == MPI_INFO_NULL) return nullptr;
  for (const auto& [k, v] : info->entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

ProgramLoader program_loader() {
  LoaderSlot& slot = loader_slot();
  std::lock_guard guard(slot.lock);
  return slot.loader;
}

Resolved resolve(const Command& command) {
  Resolved out;
  if (const std::string* host = info_value(command.info, "host");
      host != nullptr && *host != "localhost" && *host != host_name()) {
    out.problem = "info host = \"" + *host + "\": weft starts spawned ranks as threads of the " +
                  "root's process, on this host (" + host_name() + ") only";
    return out;
  }
  if (const std::string* soft = info_value(command.info, "soft");
      soft != nullptr && !valid_soft(*soft)) {
    out.problem = "info soft = \"" + *soft + "\", expected counts such as 1,2 or 1:8:2";
    return out;
  }
  const std::string* wdir = info_value(command.info, "wdir");
  std::vector<std::string> candidates;
  if (command.command.find('/') != std::string::npos) {
    candidates.push_back(command.command[0] != '/' && wdir != nullptr
                             ? join_path(*wdir, command.command)
                             : command.command);
  } else {
    std::vector<std::string> directories;
    if (const std::string* path = info_value(command.info, "path"); path != nullptr) {
      directories = split(*path, ':');
    }
    if (wdir != nullptr) directories.push_back(*wdir);
    directories.push_back(".");
    if (const char* search = std::getenv("PATH"); search != nullptr) {
      for (const std::string& d : split(search, ':')) directories.push_back(d);
    }
    for (const std::string& d : directories) candidates.push_back(join_path(d, command.command));
  }
  for (const std::string& candidate : candidates) {
    if (is_regular_file(candidate)) {
      out.path = candidate;
      return out;
    }
  }
  out.problem = "command \"" + command.command + "\" not found (looked for " + candidates.front() +
                (candidates.size() > 1 ? " and " + std::to_string(candidates.size() - 1) +
                                             " more places: info path, wdir, ., $PATH"
                                       : "") +
                ")";
  return out;
}

Children start(const std::vector<Command>& commands, const std::vector<std::string>& paths,
               const std::vector<int>& parents, std::uint32_t context,
               std::uint32_t local_context) {
  const ProgramLoader loader = program_loader();
  if (!loader) {
    throw Error(
        "this job has no program loader: only programs linked by weftcc or weftcxx can spawn");
  }
  World& world = *weft::mpi::world();
  int total = 0;
  for (const Command& c : commands) total += c.maxprocs;
  Children children;
  children.ranks = world.add_ranks(total);

  // Loaded before anything starts: a command that cannot run fails the spawn as a whole.
  struct Start {
    int rank;
    int appnum;
    RankProgram program;
    std::vector<std::string> argv;
  };
  std::vector<Start> starts;
  auto world_comm = std::make_shared<Comm>(children.ranks, allocate_context(), 0);
  world_comm->world = true;
  for (auto& local : world_comm->locals) local.name = "MPI_COMM_WORLD";
  auto self_comm = std::make_shared<Comm>(children.ranks, allocate_context(), 0);
  self_comm->self = true;
  for (auto& local : self_comm->locals) local.name = "MPI_COMM_SELF";
  children.world = world_comm.get();
  children.self = self_comm.get();
  define_in_trace(*world_comm);
  define_in_trace(*self_comm);
  std::size_t next = 0;
  for (std::size_t c = 0; c < commands.size(); ++c) {
    for (int i = 0; i < commands[c].maxprocs; ++i) {
      const int rank = children.ranks[next++];
      Start& s = starts.emplace_back();
      s.rank = rank;
      s.appnum = static_cast<int>(c);
      s.program = loader(paths[c], rank, children.world, children.self);
      s.argv.push_back(commands[c].command);
      s.argv.insert(s.argv.end(), commands[c].arguments.begin(), commands[c].arguments.end());
    }
  }
  world.keep(world_comm);
  world.keep(self_comm);

  // The children's side of the intercommunicator. Each child's state holds it too (one more
  // reference per child, let go when the child's main has returned), so that
  // MPI_Comm_get_parent can tell a freed parent communicator from a live one.
  auto* side = new Comm(children.ranks, context, 0);
  auto inter = std::make_shared<Comm::Inter>();
  inter->remote = parents;
  inter->local = std::make_unique<Comm>(children.ranks, local_context, 0);
  inter->low = false;
  side->inter = std::move(inter);
  define_in_trace(*side);
  for (auto& local : side->locals) local.name = "MPI_COMM_PARENT";  // MPI-4.1 11.8.2
  side->references.fetch_add(total, std::memory_order_relaxed);

  const int vps = Scheduler::current()->num_vps();
  for (Start& s : starts) {
    RankState& state = world.rank(s.rank);
    state.world_comm = children.world;
    state.self_comm = children.self;
    state.parent = side;
    state.appnum = s.appnum;
    ThreadAttr attr;
    attr.type = ThreadType::mpi_task;
    attr.placement = Placement::pinned(s.rank % vps);
    attr.rank = s.rank;
    auto status = std::make_shared<int>(0);
    Thread thread =
        weft::spawn(attr, [program = std::move(s.program), argv = std::move(s.argv), status, side] {
          *status = program(argv);
          // acq_rel: as MPI_Comm_free's, the last to let go sees every other use.
          if (side->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete side;
        });
    world.keep_spawned(std::move(thread), std::move(status));
  }
  return children;
}

}  // namespace weft::mpi::spawning
