#include "info_pictures.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "weft/topology_packages.h"
#include "weft/trace_file.h"

namespace weft::tools {
namespace {

constexpr int kCoreWidth = 116;
constexpr int kThreadHeight = 16;
constexpr int kCoresPerRow = 8;
constexpr int kGap = 8;
constexpr int kMargin = 12;

const char* colour_of(const std::string& kind) {
  if (kind == "rank") return "#4c72b0";
  if (kind == "omp_worker") return "#55a868";
  if (kind == "progress") return "#dd8452";
  return "#8c8c8c";
}

}  // namespace

void write_placement_svg(std::ostream& out, const Topology& topology,
                         const std::vector<TaskPlace>& places, const std::string& title) {
  std::vector<PlacedThread> threads;
  for (const TaskPlace& place : places) {
    const std::string task = std::to_string(place.task);
    threads.push_back({"rank", place.task, place.core, "rank " + task, ""});
    // The rank's OpenMP team: the rank itself on its first core, a worker on each other one.
    for (std::size_t c = 1; c < place.cores.size(); ++c) {
      threads.push_back({"omp_worker", place.task, place.cores[c],
                         "omp worker " + std::to_string(c) + " of rank " + task, ""});
    }
    if (place.progress_core >= 0) {
      threads.push_back(
          {"progress", place.task, place.progress_core, "progress of rank " + task, ""});
    }
  }
  write_threads_svg(out, topology, threads, title);
}

void write_threads_svg(std::ostream& out, const Topology& topology,
                       const std::vector<PlacedThread>& threads, const std::string& title) {
  std::map<int, std::vector<const PlacedThread*>> on_core;
  for (const PlacedThread& thread : threads) on_core[thread.core].push_back(&thread);
  std::size_t most = 1;
  for (const auto& [core, threads] : on_core) most = std::max(most, threads.size());
  const int core_height = 22 + static_cast<int>(most) * kThreadHeight;

  // Packages hold NUMA nodes, which hold cores; each NUMA node is a block of rows of cores.
  const std::vector<int> packages = core_packages(topology);
  std::map<int, std::map<int, std::vector<const Topology::Core*>>> tree;
  for (const Topology::Core& core : topology.cores()) {
    tree[packages[static_cast<std::size_t>(core.index)]][core.numa].push_back(&core);
  }

  std::string body;
  int y = kMargin + 24;
  int width = 0;
  char buffer[512];
  for (const auto& [package, nodes] : tree) {
    const int package_top = y;
    y += 22;
    int package_width = 0;
    std::string inner;
    for (const auto& [numa, cores] : nodes) {
      const int node_top = y;
      y += 22;
      const int columns = std::min<int>(kCoresPerRow, static_cast<int>(cores.size()));
      const int rows = (static_cast<int>(cores.size()) + kCoresPerRow - 1) / kCoresPerRow;
      const int node_width = columns * (kCoreWidth + kGap) + kGap;
      for (std::size_t i = 0; i < cores.size(); ++i) {
        const Topology::Core& core = *cores[i];
        const int x = 2 * kMargin + kGap + static_cast<int>(i % kCoresPerRow) * (kCoreWidth + kGap);
        const int cy = y + static_cast<int>(i / kCoresPerRow) * (core_height + kGap);
        std::snprintf(buffer, sizeof buffer,
                      "<g class=\"core\" data-core=\"%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                      "height=\"%d\" fill=\"#ffffff\" stroke=\"#555555\"/><text x=\"%d\" y=\"%d\" "
                      "font-size=\"11\">core %d (cpu %d)</text></g>\n",
                      core.index, x, cy, kCoreWidth, core_height, x + 4, cy + 14, core.index,
                      core.pus.empty() ? core.os_index : core.pus.front());
        inner += buffer;
        const auto found = on_core.find(core.index);
        if (found == on_core.end()) continue;
        int ty = cy + 20;
        for (const PlacedThread* thread : found->second) {
          std::snprintf(buffer, sizeof buffer,
                        "<g class=\"thread\" data-kind=\"%s\" data-task=\"%d\" data-core=\"%d\"%s>"
                        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" "
                        "fill=\"%s\"/><text x=\"%d\" y=\"%d\" font-size=\"10\" "
                        "fill=\"#ffffff\">%s</text></g>\n",
                        thread->kind.c_str(), thread->task, core.index, thread->details.c_str(),
                        x + 3, ty, kCoreWidth - 6, kThreadHeight - 2, colour_of(thread->kind),
                        x + 6, ty + 11, trace::svg_escaped(thread->label).c_str());
          inner += buffer;
          ty += kThreadHeight;
        }
      }
      y += rows * (core_height + kGap) + kGap;
      std::snprintf(buffer, sizeof buffer,
                    "<g class=\"numa\" data-numa=\"%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                    "height=\"%d\" fill=\"#eef3f8\" stroke=\"#7a9cc6\"/><text x=\"%d\" y=\"%d\" "
                    "font-size=\"12\">NUMA node %d</text></g>\n",
                    numa, 2 * kMargin, node_top, node_width, y - node_top, 2 * kMargin + 4,
                    node_top + 15, numa);
      inner = buffer + inner;
      package_width = std::max(package_width, node_width);
      y += kGap;
    }
    std::snprintf(buffer, sizeof buffer,
                  "<g class=\"package\" data-package=\"%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                  "height=\"%d\" fill=\"#f7f7f7\" stroke=\"#333333\"/><text x=\"%d\" y=\"%d\" "
                  "font-size=\"13\">package %d</text></g>\n",
                  package, kMargin, package_top, package_width + 2 * kMargin, y - package_top,
                  kMargin + 4, package_top + 16, package);
    body += buffer + inner;
    width = std::max(width, package_width + 4 * kMargin);
    y += kMargin;
  }
  width = std::max(width, 420);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << y
      << "\" viewBox=\"0 0 " << width << ' ' << y << "\" font-family=\"sans-serif\">\n"
      << "<title>" << trace::svg_escaped(title) << "</title>\n"
      << "<text x=\"" << kMargin << "\" y=\"" << kMargin + 12 << "\" font-size=\"13\">"
      << trace::svg_escaped(title) << "</text>\n"
      << body << "</svg>\n";
}

void print_trace_summary(std::ostream& out, const std::string& path) {
  const trace::Summary summary = trace::summarize(path);
  char line[512];
  std::snprintf(line, sizeof line, "trace %s: %.6f s\n\nper-core utilization:\n", path.c_str(),
                summary.length_s);
  out << line;
  std::string process;
  for (const trace::CoreUse& core : summary.cores) {
    if (core.process_name != process) {
      process = core.process_name;
      out << "  " << process << '\n';
    }
    std::snprintf(line, sizeof line, "    %-40s busy %10.6f s  utilization %.3f\n",
                  core.track.c_str(), core.busy_s, core.utilization);
    out << line;
  }
  out << "\nMPI time per rank (seconds; waiting = parked inside an MPI call):\n";
  std::snprintf(line, sizeof line, "  %-8s %-6s %12s %12s %12s %12s\n", "process", "rank", "run",
                "on a core", "in MPI", "waiting");
  out << line;
  for (const trace::RankTime& rank : summary.ranks) {
    std::snprintf(line, sizeof line, "  %-8d %-6d %12.6f %12.6f %12.6f %12.6f\n", rank.process,
                  rank.rank, rank.run_s, rank.running_s, rank.mpi_s, rank.mpi_wait_s);
    out << line;
  }
}

}  // namespace weft::tools
