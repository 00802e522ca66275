#include "trace_parts.h"

#include <cstdio>
#include <filesystem>
#include <vector>

#include "weft/error.h"

namespace weft::tools {

TraceParts::TraceParts(const trace::Settings& settings, int processes)
    : settings_(settings), processes_(processes), folder_(settings.file + ".parts") {
  std::error_code error;
  std::filesystem::remove_all(folder_, error);
  if (!std::filesystem::create_directories(folder_, error) || error) {
    throw Error("cannot create the folder " + folder_ +
                " for the trace's parts: " + error.message());
  }
}

TraceParts::~TraceParts() {
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

std::string TraceParts::part(int process) const {
  return folder_ + "/" + std::to_string(process) + ".raw";
}

void TraceParts::merge() noexcept {
  try {
    std::vector<trace::ProcessTrace> traces;
    for (int process = 0; process < processes_; ++process) {
      if (!std::filesystem::exists(part(process))) {
        std::fprintf(stderr, "weftrun: process %d left no trace; %s lacks it\n", process,
                     settings_.file.c_str());
        continue;
      }
      traces.push_back(trace::read_raw(part(process)));
      traces.back().process = process;
    }
    if (traces.empty()) throw Error("no process left a trace");
    trace::write(traces, settings_.file, settings_.format);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "weftrun: trace %s not written: %s\n", settings_.file.c_str(),
                 error.what());
  }
}

}  // namespace weft::tools
