// weftrun's side of the trace of a job of several processes: each process writes its events into
// a raw part in a folder beside the trace file; once they have all ended weftrun merges the parts
// into the one trace file (one OTF2 location, or JSON track, per virtual processor of every
// process) and removes the folder.
#pragma once

#include <string>

#include "weft/trace_file.h"

namespace weft::tools {

class TraceParts {
 public:
  // Makes the folder FILE.parts; throws weft::Error when it cannot.
  TraceParts(const trace::Settings& settings, int processes);
  TraceParts(const TraceParts&) = delete;
  TraceParts& operator=(const TraceParts&) = delete;
  ~TraceParts();

  std::string part(int process) const;
  // Writes the trace from the parts the processes left (a process that died leaves none: the
  // trace then lacks it, as stderr says). Reports a failure on stderr.
  void merge() noexcept;

 private:
  trace::Settings settings_;
  int processes_;
  std::string folder_;
};

}  // namespace weft::tools
