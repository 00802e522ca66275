#include "io/hints.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "info/info.h"

namespace weft::mpi::io {
namespace {

const std::string* find(const File& file, const std::string& key) {
  for (const auto& [k, v] : file.hints) {
    if (k == key) return &v;
  }
  return nullptr;
}

void put(std::vector<std::pair<std::string, std::string>>& hints, const std::string& key,
         const std::string& value) {
  for (auto& [k, v] : hints) {
    if (k == key) {
      v = value;
      return;
    }
  }
  hints.emplace_back(key, value);
}

// The hints of the file ROMIO_HINTS names, as ROMIO reads it: a key and its value per line, `#`
// comments, the first line of a key the one that counts.
void read_hints_file(std::vector<std::pair<std::string, std::string>>& hints) {
  const char* path = std::getenv("ROMIO_HINTS");
  if (path == nullptr || *path == '\0') return;
  std::ifstream in(path);
  std::vector<std::string> seen;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string key, value;
    if (!(words >> key >> value)) continue;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    put(hints, key, value);
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> initial_hints(MPI_Info info) {
  std::vector<std::pair<std::string, std::string>> hints = {
      {"romio_cb_write", "automatic"},
      {"romio_cb_read", "automatic"},
  };
  // A site's or a job script's file first, then what the program asks for.
  read_hints_file(hints);
  if (info != MPI_INFO_NULL) {
    for (const auto& [key, value] : info->entries) put(hints, key, value);
  }
  return hints;
}

void update_hints(File& file, MPI_Info info) {
  if (info == MPI_INFO_NULL) return;
  for (const auto& [key, value] : info->entries) put(file.hints, key, value);
}

bool collective_buffering(const File& file, bool write) {
  const std::string* value = find(file, write ? "romio_cb_write" : "romio_cb_read");
  return value == nullptr || *value != "disable";
}

std::size_t aggregator_processes(const File& file) {
  const std::string* value = find(file, "cb_nodes");
  if (value == nullptr) return 0;
  char* end = nullptr;
  const long long n = std::strtoll(value->c_str(), &end, 10);
  return end != value->c_str() && *end == '\0' && n > 0 ? static_cast<std::size_t>(n) : 0;
}

}  // namespace weft::mpi::io
