// A trace drawn as SVG (weft-info trace-summary FILE --svg OUT): a row per track, a user
// thread's slices as wide bars coloured per thread, the spans inside them as thinner bars
// coloured per category, below them.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <ostream>

#include "trace_write.h"

namespace weft::trace {
namespace {

constexpr int kLabelWidth = 230;
constexpr int kPlotWidth = 900;
constexpr int kRowHeight = 44;
constexpr int kThreadBar = 14;
constexpr int kSpanBar = 7;

const char* colour_of(std::uint8_t category) {
  switch (static_cast<Category>(category)) {
    case Category::mpi:
      return "#c44e52";
    case Category::omp:
      return "#55a868";
    case Category::nbc:
      return "#dd8452";
    case Category::io:
      return "#8c8c8c";
    default:
      return "#8172b3";
  }
}

const char* const kThreadColours[] = {"#4c72b0", "#64b5cd", "#937860", "#da8bc3",
                                      "#ccb974", "#8da0cb", "#66c2a5", "#a6d854"};

}  // namespace

std::string svg_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

void write_timeline_svg(const std::string& path, std::ostream& out) {
  const Timeline timeline = path.ends_with(".otf2") ? read_otf2(path) : read_json(path);
  // The drawing spans the user threads' slices: the start-up before the first and the tear-down
  // after the last are left out.
  std::uint64_t first = UINT64_MAX, last = 0;
  for (const Track& track : timeline.tracks) {
    std::vector<std::uint8_t> open;
    for (const Op& op : track.ops) {
      if (op.kind == Op::Kind::enter) {
        open.push_back(op.category);
        if (op.category == kThreadCategory) first = std::min(first, op.time);
      } else if (op.kind == Op::Kind::leave && !open.empty()) {
        if (open.back() == kThreadCategory) last = std::max(last, op.time);
        open.pop_back();
      }
    }
  }
  if (first >= last) first = 0, last = timeline.length_ns;
  const double length = static_cast<double>(std::max<std::uint64_t>(last - first, 1));
  auto x_of = [&](std::uint64_t time) {
    const std::uint64_t at = std::clamp(time, first, last);
    return kLabelWidth + static_cast<double>(at - first) / length * kPlotWidth;
  };
  const int height = 40 + static_cast<int>(timeline.tracks.size()) * kRowHeight + 50;
  const int width = kLabelWidth + kPlotWidth + 20;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"sans-serif\">\n"
      << "<title>" << svg_escaped(path) << "</title>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  char buffer[512];
  for (int tick = 0; tick <= 4; ++tick) {
    const double x = kLabelWidth + tick * kPlotWidth / 4.0;
    std::snprintf(
        buffer, sizeof buffer,
        "<line x1=\"%.1f\" y1=\"24\" x2=\"%.1f\" y2=\"%d\" stroke=\"#dddddd\"/>"
        "<text x=\"%.1f\" y=\"18\" font-size=\"10\" text-anchor=\"middle\">%.3f ms</text>\n",
        x, x, height - 50, x, (static_cast<double>(first) + length * tick / 4.0) * 1e-6);
    out << buffer;
  }
  std::hash<std::string> hash;
  for (std::size_t t = 0; t < timeline.tracks.size(); ++t) {
    const Track& track = timeline.tracks[t];
    const int top = 30 + static_cast<int>(t) * kRowHeight;
    const std::string label =
        (static_cast<std::size_t>(track.process) < timeline.process_names.size() &&
                 timeline.process_names.size() > 1
             ? "p" + std::to_string(track.process) + " "
             : std::string()) +
        track.name;
    std::snprintf(buffer, sizeof buffer, "<text x=\"4\" y=\"%d\" font-size=\"11\">%s</text>\n",
                  top + 14, svg_escaped(label.substr(0, 36)).c_str());
    out << buffer;
    struct Open {
      const Op* op;
      std::size_t depth;
    };
    std::vector<Open> open;
    for (const Op& op : track.ops) {
      if (op.kind == Op::Kind::enter) {
        open.push_back({&op, open.size()});
        continue;
      }
      if (op.kind != Op::Kind::leave || open.empty()) continue;
      const Open slice = open.back();
      open.pop_back();
      const double x0 = x_of(slice.op->time);
      const double w = std::max(x_of(op.time) - x0, 0.4);
      const bool thread = slice.op->category == kThreadCategory;
      const int y = thread ? top + 4
                           : top + 4 + kThreadBar + 2 +
                                 static_cast<int>(std::min<std::size_t>(slice.depth, 3) - 1) * 3;
      const char* colour = thread
                               ? kThreadColours[hash(*slice.op->name) % std::size(kThreadColours)]
                               : colour_of(slice.op->category);
      std::snprintf(buffer, sizeof buffer,
                    "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
                    "<title>%s</title></rect>\n",
                    x0, y, w, thread ? kThreadBar : kSpanBar, colour,
                    svg_escaped(*slice.op->name).c_str());
      out << buffer;
      if (thread && w > 40) {
        std::snprintf(buffer, sizeof buffer,
                      "<text x=\"%.2f\" y=\"%d\" font-size=\"9\" fill=\"#ffffff\">%s</text>\n",
                      x0 + 2, y + 10, svg_escaped(slice.op->name->substr(0, w / 5)).c_str());
        out << buffer;
      }
    }
  }
  const int legend = height - 30;
  int x = kLabelWidth;
  for (const auto& [name, category] :
       {std::pair{"MPI call", Category::mpi}, std::pair{"OpenMP", Category::omp},
        std::pair{"nbc piece", Category::nbc}, std::pair{"I/O", Category::io}}) {
    std::snprintf(buffer, sizeof buffer,
                  "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"8\" fill=\"%s\"/>"
                  "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n",
                  x, legend, colour_of(static_cast<std::uint8_t>(category)), x + 18, legend + 8,
                  name);
    out << buffer;
    x += 110;
  }
  std::snprintf(buffer, sizeof buffer,
                "<text x=\"%d\" y=\"%d\" font-size=\"11\">wide bars: the user thread on the "
                "core</text>\n",
                x, legend + 8);
  out << buffer << "</svg>\n";
}

}  // namespace weft::trace
