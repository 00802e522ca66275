// weft-info's pictures and trace summaries: the machine with every placed thread as SVG, and what
// a trace file says about the cores' use and the ranks' time in MPI.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "weft/placement.h"
#include "weft/topology.h"

namespace weft::tools {

// A thread drawn on the machine.
struct PlacedThread {
  std::string kind;  // rank, omp_worker, progress, io, user
  int task = -1;     // the rank it belongs to; -1 for none
  int core = -1;     // the topology core it is drawn on
  std::string label;
  std::string details;  // more data-* attributes, already formatted: ` data-x="1"`
};

// Packages, NUMA nodes and cores, with each thread on its core: one <g class="thread"> element
// per thread, with data-kind, data-task and data-core.
void write_threads_svg(std::ostream& out, const Topology& topology,
                       const std::vector<PlacedThread>& threads, const std::string& title);

// The same for each rank, OpenMP worker and progress thread of `places` (weft-info placement
// --tasks N --svg).
void write_placement_svg(std::ostream& out, const Topology& topology,
                         const std::vector<TaskPlace>& places, const std::string& title);

// weft-info trace-summary FILE. Throws weft::Error for a file it cannot read.
void print_trace_summary(std::ostream& out, const std::string& path);

}  // namespace weft::tools
