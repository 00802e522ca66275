// Recording the spans of an OpenMP team's workers (a team's threads other than its master) without
// a clock read: they lie within their master's region, whose begin and join are timed
// (docs/observability.md, "What recording costs"). Apart from weft/trace.h, which nearly every
// file includes, so that what only the OpenMP bridge uses does not rebuild them.
#pragma once

#include <cstdint>

#include "weft/trace.h"

namespace weft::trace {

namespace detail {
void begin_in_team(Category category, const char* name, std::uint64_t arg,
                   std::uint64_t after) noexcept;
void end_in_team(Category category, const char* name, bool after_wait) noexcept;
}  // namespace detail

// The time of the calling kernel thread's last clock read (0 where it has recorded nothing in this
// session): what a team's master passes its workers' spans as their bound (TeamSpan), and an MPI
// call's stamp for the other member of a barrier of two. Callers test enabled(category) first.
std::uint64_t stamp() noexcept;
// The recording clock read now, with no record (0 where the calling kernel thread has recorded
// nothing in this session): what the last member to arrive at an MPI_Barrier leaves the others
// as the bound of their ends, which its own stamp() is not (another member may have begun after
// its last read). Callers test enabled(category) first.
std::uint64_t read_stamp() noexcept;

// Who records a TeamSpan: the team's master, whose span is timed (its begin reads the clock, its
// end as End::at_resume); a worker, whose span ends right after a wait (`worker_wait`: a
// barrier's, a join's) or anywhere (`worker`: its region's, which ends after the user's code).
enum class Member : std::uint8_t { master, worker, worker_wait };

// A span of a thread of an OpenMP team. A worker's reads no clock (the 16th untimed record in a
// row of a kernel thread does): the trace places it between the timed records around it on its
// kernel thread, its begin no earlier than `after`, the master's stamp() at its region's begin
// (0: no bound). A worker_wait span's end takes the time of the switch into the thread where the
// thread resumed from a park, with nothing recorded since (as End::at_resume): a worker that
// waited parked keeps the time it resumed. `arg` is kept to 32 bits for a worker.
class TeamSpan {
 public:
  TeamSpan(Category category, const char* name, std::uint64_t arg, std::uint64_t after,
           Member member) noexcept
      : name_(enabled(category) ? name : nullptr), category_(category), member_(member) {
    if (name_ != nullptr) [[unlikely]] {
      if (member == Member::master) {
        detail::begin(category, name, arg);
      } else {
        detail::begin_in_team(category, name, arg, after);
      }
    }
  }
  ~TeamSpan() {
    if (name_ != nullptr) [[unlikely]] {
      if (member_ == Member::master) {
        detail::end_at_resume(category_, name_);
      } else {
        detail::end_in_team(category_, name_, member_ == Member::worker_wait);
      }
    }
  }
  TeamSpan(const TeamSpan&) = delete;
  TeamSpan& operator=(const TeamSpan&) = delete;

 private:
  const char* name_;
  Category category_;
  Member member_;
};

}  // namespace weft::trace
