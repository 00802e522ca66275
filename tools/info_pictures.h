// weft-info's pictures and trace summaries: the machine with every placed thread as SVG, and what
// a trace file says about the cores' use and the ranks' time in MPI.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "weft/placement.h"
#include "weft/topology.h"

namespace weft::tools {

// Packages, NUMA nodes and cores, with each rank, OpenMP worker and progress thread of `places`
// on its core: one <g class="thread"> element per placed thread.
void write_placement_svg(std::ostream& out, const Topology& topology,
                         const std::vector<TaskPlace>& places, const std::string& title);

// weft-info trace-summary FILE. Throws weft::Error for a file it cannot read.
void print_trace_summary(std::ostream& out, const std::string& path);

}  // namespace weft::tools
