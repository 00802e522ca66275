#include "weft/thread_type.h"

namespace weft {

std::string_view to_string(ThreadType type) {
  switch (type) {
    case ThreadType::mpi_task:
      return "mpi_task";
    case ThreadType::omp_worker:
      return "omp_worker";
    case ThreadType::progress:
      return "progress";
    case ThreadType::io:
      return "io";
    case ThreadType::user:
      return "user";
  }
  return "unknown";
}

std::optional<ThreadType> parse_thread_type(std::string_view name) {
  for (ThreadType type : kThreadTypes) {
    if (to_string(type) == name) return type;
  }
  return std::nullopt;
}

}  // namespace weft
