// What the generated large-count forms (MPI_Send_c...) share: narrowing an MPI_Count argument to
// the type of the function the form forwards to, with an error that names the call and the
// argument when the value does not fit. weft carries counts as int inside; a larger count is
// refused by name rather than cut (MPI_ERR_COUNT, or MPI_ERR_ARG for a displacement).
#pragma once

#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "mpi.h"

namespace weft::mpi::large_count {

int refuse(std::string_view function, std::string_view argument, long long value, long long largest,
           MPI_Comm comm);

template <typename Narrow, typename Wide>
int narrow(std::string_view function, std::string_view argument, Wide value, Narrow* out,
           MPI_Comm comm) {
  if (value > std::numeric_limits<Narrow>::max() || value < std::numeric_limits<Narrow>::min()) {
    return refuse(function, argument, value, std::numeric_limits<Narrow>::max(), comm);
  }
  *out = static_cast<Narrow>(value);
  return MPI_SUCCESS;
}

// An array argument narrowed element by element. It lives as long as the blocking call it is
// passed to, or, for a nonblocking or persistent call, as long as the request (keep_with).
template <typename Narrow>
class Narrowed {
 public:
  template <typename Wide>
  int take(std::string_view function, std::string_view argument, const Wide* values, int length,
           MPI_Comm comm) {
    if (values == nullptr || length <= 0) return MPI_SUCCESS;
    values_.resize(static_cast<std::size_t>(length));
    for (int i = 0; i < length; ++i) {
      if (int rc = narrow(function, argument, values[i], &values_[i], comm); rc != MPI_SUCCESS) {
        return rc;
      }
    }
    present_ = true;
    return MPI_SUCCESS;
  }
  // Null where the argument was null or not read at this rank.
  Narrow* data() { return present_ ? values_.data() : nullptr; }

 private:
  std::vector<Narrow> values_;
  bool present_ = false;
};

// MPI is initialized in the caller's rank and `comm` is a communicator it may use: checked before
// the length of a per-member array is asked of it.
int check_comm_for(std::string_view function, MPI_Comm comm);
// Hands `owned` to `request`, which keeps it until it is disposed of: the arrays a nonblocking or
// persistent operation reads while it runs.
void keep_with(MPI_Request request, std::shared_ptr<void> owned);

// The length of a per-member array: the group's size, the remote group's on an
// intercommunicator; 0 for a communicator the call will refuse anyway.
int group_size(MPI_Comm comm);
// The local group's size.
int local_size(MPI_Comm comm);
// The caller's neighbours in the topology of `comm` (MPI-4.1 8.6): the receive and send blocks
// of a neighbourhood collective; 0 without a topology.
int indegree_size(MPI_Comm comm);
int outdegree_size(MPI_Comm comm);
// The caller is the root of a rooted collective (MPI_ROOT on an intercommunicator).
bool is_root(MPI_Comm comm, int root);

}  // namespace weft::mpi::large_count
