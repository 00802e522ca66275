#include "running_placement.h"

#include <weft/error.h>
#include <weft/topology.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "info_pictures.h"
#include "stack_request.h"

namespace weft::tools {
namespace {

// One thread of a process's answer (mpi/diagnostics/monitor.cpp, Monitor::placement_text).
struct ThreadLine {
  std::uint64_t id = 0;
  std::string type;
  int rank = -1;
  std::string placement;  // pinned, numa, free
  int index = -1;         // pinned, free: the processor; numa: the node (operating-system index)
  int placed_cpu = -1;
  std::string state;
  int vp = -1;
  int cpu = -1;
};

struct ProcessAnswer {
  int process = -1;
  int pid = 0;
  int first_rank = 0;
  int last_rank = -1;
  std::string topology;
  std::vector<ThreadLine> threads;
};

ProcessAnswer parse(const std::string& text) {
  ProcessAnswer answer;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "process") {
      fields >> answer.process;
    } else if (key == "pid") {
      fields >> answer.pid;
    } else if (key == "ranks") {
      fields >> answer.first_rank >> answer.last_rank;
    } else if (key == "topology") {
      answer.topology = line.size() > 9 ? line.substr(9) : "";
    } else if (key == "thread") {
      ThreadLine t;
      fields >> t.id >> t.type >> t.rank >> t.placement >> t.index >> t.placed_cpu >> t.state >>
          t.vp >> t.cpu;
      if (!fields) throw Error("weft-info placement --pid: a process answered '" + line + "'");
      answer.threads.push_back(std::move(t));
    }
  }
  if (answer.process < 0) {
    throw Error("weft-info placement --pid: a process's answer has no process number");
  }
  return answer;
}

// The topology core holding processing unit `cpu`; -1 when none does.
int core_of_cpu(const Topology& topology, int cpu) {
  for (const Topology::Core& core : topology.cores()) {
    for (int pu : core.pus) {
      if (pu == cpu) return core.index;
    }
    if (core.pus.empty() && core.os_index == cpu) return core.index;
  }
  return -1;
}

std::string where(const Topology& topology, int cpu) {
  return "core " + std::to_string(core_of_cpu(topology, cpu)) + " (cpu " + std::to_string(cpu) +
         ")";
}

std::string describe(const Topology& topology, const ThreadLine& t) {
  std::string text = "thread " + std::to_string(t.id) + " (" + t.type;
  if (t.rank >= 0) text += ", rank " + std::to_string(t.rank);
  text += "): placed ";
  if (t.placement == "pinned") {
    text += "on " + where(topology, t.placed_cpu) + ", pinned";
  } else if (t.placement == "numa") {
    text += "on NUMA node " + std::to_string(t.index) + ", any of its cores";
  } else if (t.placed_cpu >= 0) {
    text += "on " + where(topology, t.placed_cpu) + ", free to move";
  } else {
    text += "where its spawner ran, free to move";
  }
  text += "; " + t.state;
  if (t.cpu >= 0) text += (t.state == "running" ? " on " : ", last on ") + where(topology, t.cpu);
  return text + "\n";
}

PlacedThread drawn(const Topology& topology, const ProcessAnswer& process, const ThreadLine& t,
                   bool several) {
  PlacedThread thread;
  thread.kind = t.type == "mpi_task" ? "rank" : t.type;
  thread.task = t.rank;
  // A thread is drawn where it was placed, or where it runs when it may run anywhere.
  thread.core = core_of_cpu(topology, t.placed_cpu >= 0 ? t.placed_cpu : t.cpu);
  const std::string suffix = several ? " p" + std::to_string(process.process) : "";
  if (t.type == "mpi_task") {
    thread.label = "rank " + std::to_string(t.rank);
  } else {
    thread.label = t.type + " #" + std::to_string(t.id) +
                   (t.rank >= 0 ? " of rank " + std::to_string(t.rank) : suffix);
  }
  thread.details = " data-process=\"" + std::to_string(process.process) + "\" data-thread=\"" +
                   std::to_string(t.id) + "\" data-placement=\"" + t.placement +
                   "\" data-now-core=\"" + std::to_string(core_of_cpu(topology, t.cpu)) + "\"";
  return thread;
}

}  // namespace

void print_running_placement(std::ostream& out, int pid, const std::optional<std::string>& svg) {
  std::vector<ProcessAnswer> processes;
  for (const std::string& text : ask_placement(pid)) processes.push_back(parse(text));
  // Every process of the job loaded the same topology; a process restricted to some cpus numbers
  // its cores anew, so the cores here are the whole topology's, found by their cpus.
  const Topology topology = Topology::load(processes.front().topology);
  std::vector<PlacedThread> threads;
  for (const ProcessAnswer& process : processes) {
    out << "weft: placement of process " << process.process << " (pid " << process.pid << ", ranks "
        << process.first_rank << "-" << process.last_rank << "), " << process.threads.size()
        << " user threads\n";
    for (const ThreadLine& t : process.threads) {
      out << "  " << describe(topology, t);
      threads.push_back(drawn(topology, process, t, processes.size() > 1));
    }
  }
  if (!svg) return;
  std::ofstream file(*svg);
  if (!file) throw Error("weft-info placement: cannot write " + *svg);
  write_threads_svg(file, topology, threads,
                    "job of pid " + std::to_string(pid) + ": " + std::to_string(threads.size()) +
                        " user threads of " + std::to_string(processes.size()) + " process" +
                        (processes.size() > 1 ? "es" : ""));
}

}  // namespace weft::tools
