// Attribute caching on communicators (MPI-3.1 6.7). Keyvals are process-wide: one rank may
// create a keyval and any rank of the process may use it (ranks of a process are one MPI library
// instance). Attribute values are per rank: each member keeps its own in its slot of the
// communicator (weft_mpi_comm::Local::attributes), as each MPI process would.
#pragma once

#include <optional>
#include <string_view>

#include "mpi.h"

namespace weft::mpi {

// What MPI_Comm_create_keyval registered. Null callbacks behave as the predefined null ones.
struct Keyval {
  MPI_Comm_copy_attr_function* copy = nullptr;
  MPI_Comm_delete_attr_function* remove = nullptr;
  void* extra_state = nullptr;
};

// MPI_TAG_UB .. MPI_LASTUSEDCODE: read-only attributes of MPI_COMM_WORLD.
constexpr bool is_predefined_keyval(int keyval) {
  return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

// The registry of keyvals.
namespace keyvals {

int create(const Keyval& keyval);
// The keyval when it exists and MPI_Comm_free_keyval has not been called on it.
std::optional<Keyval> live(int id);
// A keyval that some attribute still uses: it outlives MPI_Comm_free_keyval until the last such
// attribute is deleted (MPI-3.1 6.7.2), so that its callbacks can still run.
Keyval attached(int id);
// False when `id` is unknown, predefined or already freed.
bool free(int id);
// Counts the attributes set with a keyval; the last detach of a freed keyval forgets it.
void attach(int id);
void detach(int id);

}  // namespace keyvals

// MPI_Comm_dup's part: copies the caller's attributes of `parent` onto its slot of `child`
// through the keyvals' copy callbacks. A failing callback fails the call: the attributes copied so
// far are deleted again and the callback's code is raised on `parent` and returned.
int copy_attributes(MPI_Comm parent, MPI_Comm child, std::string_view function);

// Runs the delete callbacks of all the caller's attributes on `comm` (MPI_Comm_free, and
// MPI_Finalize for MPI_COMM_SELF), newest keyval first, removing each. A failing callback stops
// there: its code is raised on `comm` and returned, and the remaining attributes stay.
int delete_attributes(MPI_Comm comm, std::string_view function);

}  // namespace weft::mpi
