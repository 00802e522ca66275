#include "mpi_t/variables.h"

#include <cstring>
#include <map>
#include <mutex>

#include "init/world.h"
#include "weft/config.h"
#include "weft/scheduler.h"

namespace weft::mpi::tools {

namespace {

// The one key a running job can change: the rank's waits read it at every spin.
constexpr std::string_view kSpinKey = "scheduler.spin_us";

const Config& effective_config() {
  static const Config defaults;
  const Scheduler* scheduler = Scheduler::current();
  return scheduler != nullptr ? scheduler->config() : defaults;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find(separator, from)) != std::string::npos; from = at + 1) {
    parts.push_back(text.substr(from, at - from));
  }
  parts.push_back(text.substr(from));
  return parts;
}

int category_of(Tables& t, std::map<std::string, int>& by_name, const std::string& name,
                const std::string& desc) {
  auto [it, fresh] = by_name.emplace(name, static_cast<int>(t.categories.size()));
  if (fresh) t.categories.push_back(Category{name, desc, {}, {}});
  return it->second;
}

std::string section_of(const std::string& key) {
  const std::size_t dot = key.find('.');
  return dot == std::string::npos ? key : key.substr(0, dot);
}

Tables build() {
  Tables t;
  std::map<std::string, int> categories;
  for (const Config::Entry& entry : Config().entries()) {
    ControlVariable cvar;
    cvar.name = entry.key;
    cvar.desc = entry.doc + " (" + entry.type + ")";
    const std::string section = section_of(entry.key);
    cvar.verbosity = section == "mpi" ? MPI_T_VERBOSITY_USER_BASIC : MPI_T_VERBOSITY_TUNER_BASIC;
    if (entry.type.rfind("integer ", 0) == 0) {
      const std::vector<std::string> range = split(entry.type.substr(8), '.');
      const long long max = std::stoll(range.back());
      cvar.datatype = max <= 2147483647LL ? MPI_INT : MPI_UNSIGNED_LONG_LONG;
    } else if (entry.type == "boolean") {
      cvar.datatype = MPI_INT;
    } else if (entry.type.rfind("size", 0) == 0) {
      cvar.datatype = MPI_UNSIGNED_LONG_LONG;
    } else if (entry.type.rfind("one of ", 0) == 0) {
      cvar.datatype = MPI_INT;
      cvar.enumeration = static_cast<int>(t.enumerations.size());
      t.enumerations.push_back(Enumeration{entry.key, split(entry.type.substr(7), '|')});
    } else {
      cvar.datatype = MPI_CHAR;
    }
    // Every key but one is read when the job starts (the scheduler, the placement, the world's
    // limits): changing it later would change nothing.
    cvar.scope = entry.key == kSpinKey ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_CONSTANT;
    cvar.category =
        category_of(t, categories, section,
                    "weft's configuration keys " + section + (section == entry.key ? "" : ".*"));
    t.categories[cvar.category].cvars.push_back(static_cast<int>(t.cvars.size()));
    t.cvars.push_back(std::move(cvar));
  }
  const struct {
    const char* name;
    const char* desc;
    int var_class;
    Counter counter;
    const char* category;
  } pvars[] = {
      {"mpi_messages_sent", "point-to-point messages the calling rank sent (collectives' included)",
       MPI_T_PVAR_CLASS_COUNTER, Counter::messages_sent, "mpi"},
      {"mpi_messages_received",
       "messages that reached the calling rank's matching engine, from this process or another",
       MPI_T_PVAR_CLASS_COUNTER, Counter::messages_arrived, "mpi"},
      {"mpi_unexpected_queue_length",
       "messages waiting in the calling rank's unexpected queue now (no receive posted for them)",
       MPI_T_PVAR_CLASS_LEVEL, Counter::unexpected_length, "mpi"},
      {"mpi_parks", "MPI waits of the calling rank that parked their thread after their spin",
       MPI_T_PVAR_CLASS_COUNTER, Counter::mpi_parks, "mpi"},
      {"scheduler_switches",
       "context switches into user threads, all virtual processors of "
       "this process",
       MPI_T_PVAR_CLASS_COUNTER, Counter::switches, "scheduler"},
      {"scheduler_steals", "threads a virtual processor of this process took from another's queue",
       MPI_T_PVAR_CLASS_COUNTER, Counter::steals, "scheduler"},
      {"scheduler_sleeps", "times a virtual processor of this process slept for lack of work",
       MPI_T_PVAR_CLASS_COUNTER, Counter::sleeps, "scheduler"},
      {"scheduler_remote_wakes", "times a thread woke a sleeping virtual processor of this process",
       MPI_T_PVAR_CLASS_COUNTER, Counter::remote_wakes, "scheduler"},
  };
  for (const auto& p : pvars) {
    PerformanceVariable pvar{
        p.name,      p.desc,    MPI_T_VERBOSITY_USER_BASIC,
        p.var_class, p.counter, category_of(t, categories, p.category, p.category)};
    t.categories[pvar.category].pvars.push_back(static_cast<int>(t.pvars.size()));
    t.pvars.push_back(std::move(pvar));
  }
  return t;
}

RankState* caller_rank() {
  World* w = world();
  const int rank = caller_world_rank();
  return w != nullptr && rank >= 0 ? &w->rank(rank) : nullptr;
}

std::string text_of(const ControlVariable& cvar) {
  return effective_config().entry(cvar.name).value;
}

}  // namespace

const Tables& tables() {
  static const Tables built = build();
  return built;
}

int cvar_count(int index) {
  const ControlVariable& cvar = tables().cvars[static_cast<std::size_t>(index)];
  if (cvar.datatype != MPI_CHAR) return 1;
  return static_cast<int>(text_of(cvar).size()) + 1;
}

void read_cvar(int index, void* buffer) {
  const ControlVariable& cvar = tables().cvars[static_cast<std::size_t>(index)];
  const Config& config = effective_config();
  if (cvar.name == kSpinKey && world() != nullptr) {
    const World& w = *world();
    *static_cast<int*>(buffer) =
        static_cast<int>(const_cast<World&>(w).rank(w.first_local()).spin.limit_ns() / 1000);
  } else if (cvar.enumeration >= 0) {
    const std::vector<std::string>& items =
        tables().enumerations[static_cast<std::size_t>(cvar.enumeration)].items;
    const std::string value = config.get_string(cvar.name);
    int found = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i] == value) found = static_cast<int>(i);
    }
    *static_cast<int*>(buffer) = found;
  } else if (cvar.datatype == MPI_CHAR) {
    const std::string value = text_of(cvar);
    std::memcpy(buffer, value.c_str(), value.size() + 1);
  } else if (config.entry(cvar.name).type == "boolean") {
    *static_cast<int*>(buffer) = config.get_bool(cvar.name) ? 1 : 0;
  } else if (cvar.datatype == MPI_INT) {
    *static_cast<int*>(buffer) = static_cast<int>(config.get_int(cvar.name));
  } else if (config.entry(cvar.name).type.rfind("size", 0) == 0) {
    *static_cast<unsigned long long*>(buffer) = config.get_size(cvar.name);
  } else {
    *static_cast<unsigned long long*>(buffer) =
        static_cast<unsigned long long>(config.get_int(cvar.name));
  }
}

int write_cvar(int index, const void* buffer) {
  const ControlVariable& cvar = tables().cvars[static_cast<std::size_t>(index)];
  if (cvar.scope == MPI_T_SCOPE_CONSTANT) return MPI_T_ERR_CVAR_SET_NEVER;
  // scheduler.spin_us: the ceiling of every local rank's adaptive spin.
  const int value = *static_cast<const int*>(buffer);
  if (value < 0 || value > 1000000) return MPI_T_ERR_INVALID;
  World* w = world();
  if (w == nullptr) return MPI_T_ERR_CVAR_SET_NOT_NOW;
  for (int r = w->first_local(); r < w->first_local() + w->local_ranks(); ++r) {
    w->rank(r).spin.set_limit(static_cast<std::int64_t>(value) * 1000);
  }
  return MPI_SUCCESS;
}

std::uint64_t read_counter(Counter counter) {
  switch (counter) {
    case Counter::messages_sent:
    case Counter::messages_arrived:
    case Counter::unexpected_length:
    case Counter::mpi_parks: {
      const RankState* rank = caller_rank();
      if (rank == nullptr) return 0;
      if (counter == Counter::messages_sent) return rank->engine.messages_sent();
      if (counter == Counter::messages_arrived) return rank->engine.messages_arrived();
      if (counter == Counter::unexpected_length) return rank->engine.unexpected_length();
      return rank->spin.parks();
    }
    case Counter::switches:
    case Counter::steals:
    case Counter::sleeps:
    case Counter::remote_wakes: {
      const Scheduler* scheduler = Scheduler::current();
      if (scheduler == nullptr) return 0;
      std::uint64_t sum = 0;
      for (const Scheduler::VpStats& vp : scheduler->stats()) {
        sum += counter == Counter::switches ? vp.switches
               : counter == Counter::steals ? vp.steals
               : counter == Counter::sleeps ? vp.sleeps
                                            : vp.remote_wakes;
      }
      return sum;
    }
  }
  return 0;
}

}  // namespace weft::mpi::tools
