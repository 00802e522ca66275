// The kinds of user-level threads weft runs. The type selects a thread's default priority and
// stack size (configuration keys priority.<type> and stack.<type>) and appears in diagnostics.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace weft {

enum class ThreadType : std::uint8_t { mpi_task, omp_worker, progress, io, user };

inline constexpr std::array<ThreadType, 5> kThreadTypes = {
    ThreadType::mpi_task, ThreadType::omp_worker, ThreadType::progress, ThreadType::io,
    ThreadType::user};

// Priorities run from kMinPriority to kMaxPriority; a higher value runs first.
inline constexpr int kMinPriority = 0;
inline constexpr int kMaxPriority = 7;
inline constexpr int kPriorityLevels = kMaxPriority - kMinPriority + 1;

// "mpi_task", "omp_worker", "progress", "io", "user".
std::string_view to_string(ThreadType type);
std::optional<ThreadType> parse_thread_type(std::string_view name);

}  // namespace weft
