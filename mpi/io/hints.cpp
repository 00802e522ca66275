#include "io/hints.h"

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

}  // namespace

std::vector<std::pair<std::string, std::string>> initial_hints(MPI_Info info) {
  std::vector<std::pair<std::string, std::string>> hints = {
      {"romio_cb_write", "automatic"},
      {"romio_cb_read", "automatic"},
  };
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

}  // namespace weft::mpi::io
