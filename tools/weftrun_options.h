// weftrun's command line as a function, apart from main: the launcher calls it, and so does its
// fuzz target (tests/fuzz/weftrun_options_fuzz.cpp), which runs it on arbitrary arguments without
// starting a job.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "job_process.h"
#include "launch_protocol.h"

namespace weft::tools {

// Input the user can fix: reported with a hint at --help and exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WeftrunOptions {
  LaunchSettings launch;
  int processes = 1;
  std::chrono::milliseconds stopped_limit = kStoppedLimit;
  std::vector<std::string> command;  // program and its arguments
  bool help = false;
};

// Parses the arguments after the program's name. Throws UsageError for an unknown option, a
// missing or invalid value, or no program (unless --help); weft::Error for a malformed --set.
WeftrunOptions parse_weftrun_options(const std::vector<std::string_view>& arguments);

}  // namespace weft::tools
