#include "stack_request.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "weft/error.h"
#include "weft/thread_dump.h"

namespace weft::tools {

namespace {

// The abstract sockets bound in this host's network namespace, as /proc/net/unix lists them
// ("@name" at the end of a line).
std::vector<std::string> abstract_sockets() {
  std::vector<std::string> names;
  std::ifstream in("/proc/net/unix");
  for (std::string line; std::getline(in, line);) {
    const std::size_t at = line.rfind(" @");
    if (at != std::string::npos) names.push_back(line.substr(at + 2));
  }
  return names;
}

bool answers(int pid, const std::vector<std::string>& sockets) {
  return std::find(sockets.begin(), sockets.end(), stack_files::ready(pid)) != sockets.end() &&
         ::kill(pid, 0) == 0;
}

// The parent of `pid` from /proc/pid/stat ("pid (comm) state ppid ..."; comm may hold spaces).
int parent_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 1));
  char state = 0;
  int parent = -1;
  rest >> state >> parent;
  return parent;
}

// The weft job processes among `pid` and its descendants, in pid order.
std::vector<int> job_processes(int pid) {
  const std::vector<std::string> sockets = abstract_sockets();
  if (answers(pid, sockets)) return {pid};
  std::vector<int> all;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") == std::string::npos) all.push_back(std::stoi(name));
  }
  std::vector<int> found;
  for (int candidate : all) {
    if (!answers(candidate, sockets)) continue;
    for (int up = parent_of(candidate); up > 1; up = parent_of(up)) {
      if (up == pid) {
        found.push_back(candidate);
        break;
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// `what`: the request file's text, empty for the stacks.
std::string ask(int pid, const std::string& command, const std::string& what) {
  const std::string request = stack_files::request(pid);
  const std::string output = stack_files::output(pid);
  std::filesystem::remove(output);
  {
    // Written whole before the signal: the process reads it when the signal arrives.
    std::ofstream file(request);
    file << what;
  }
  if (::kill(pid, SIGQUIT) != 0) {
    std::filesystem::remove(request);
    throw Error("weft-info " + command + ": cannot signal process " + std::to_string(pid));
  }
  // The process writes output and removes the request from its watcher thread, which looks at
  // least every 100 ms.
  constexpr auto kPatience = std::chrono::seconds(10);
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::access(request.c_str(), F_OK) != 0 && ::access(output.c_str(), F_OK) == 0) {
      std::ifstream in(output);
      std::ostringstream text;
      text << in.rdbuf();
      std::filesystem::remove(output);
      return text.str();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::filesystem::remove(request);
  throw Error("weft-info " + command + ": process " + std::to_string(pid) +
              " did not answer within 10 s");
}

std::vector<std::string> ask_job(int pid, const std::string& command, const std::string& what) {
  const std::vector<int> processes = job_processes(pid);
  if (processes.empty()) {
    throw Error("weft-info " + command + ": process " + std::to_string(pid) +
                " runs no weft job, nor does any process it started");
  }
  std::vector<std::string> answers;
  for (int process : processes) answers.push_back(ask(process, command, what));
  return answers;
}

}  // namespace

void print_stacks(std::ostream& out, int pid) {
  for (const std::string& answer : ask_job(pid, "stacks", "")) out << answer;
}

std::vector<std::string> ask_placement(int pid) {
  return ask_job(pid, "placement --pid", stack_files::kPlacementRequest);
}

}  // namespace weft::tools
