#include "rma/hints.h"

#include <algorithm>
#include <array>
#include <string>

#include "errhan/error.h"
#include "info/info.h"
#include "rma/window.h"

namespace weft::mpi::rma {

namespace {

struct Hint {
  std::string_view key;
  std::string_view default_value;
  bool boolean;
};

constexpr std::array kHints{
    Hint{"no_locks", "false", true},
    Hint{"accumulate_ordering", "rar,raw,war,waw", false},
    Hint{"accumulate_ops", "same_op_no_op", false},
    Hint{"same_size", "false", true},
    Hint{"same_disp_unit", "false", true},
    Hint{"alloc_shared_noncontig", "false", true},
};

const Hint* find(std::string_view key) {
  for (const Hint& h : kHints) {
    if (h.key == key) return &h;
  }
  return nullptr;
}

bool valid(const Hint& hint, std::string_view value) {
  if (hint.boolean) return value == "true" || value == "false";
  if (hint.key == "accumulate_ops") return value == "same_op_no_op" || value == "same_op";
  // accumulate_ordering: "none" or a comma-separated list of rar, raw, war, waw.
  if (value == "none") return true;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t end = std::min(value.find(',', start), value.size());
    const std::string_view item = value.substr(start, end - start);
    if (item != "rar" && item != "raw" && item != "war" && item != "waw") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

int check_hints(MPI_Comm comm, std::string_view function, MPI_Info info) {
  if (info == MPI_INFO_NULL) return MPI_SUCCESS;
  for (const auto& [key, value] : info->entries) {
    const Hint* hint = find(key);
    if (hint != nullptr && !valid(*hint, value)) {
      return weft::mpi::raise(comm, function, MPI_ERR_INFO_VALUE,
                              "info key \"" + key + "\" = \"" + value + "\" is not a valid value");
    }
  }
  return MPI_SUCCESS;
}

void set_hints(Window& win, MPI_Info info) {
  if (win.info.empty()) {
    for (const Hint& h : kHints) win.info.emplace_back(h.key, h.default_value);
  }
  if (info == MPI_INFO_NULL) return;
  for (const auto& [key, value] : info->entries) {
    if (find(key) == nullptr) continue;  // unknown keys are ignored (MPI-4.1 10)
    for (auto& entry : win.info) {
      if (entry.first == key) entry.second = value;
    }
  }
}

}  // namespace weft::mpi::rma
