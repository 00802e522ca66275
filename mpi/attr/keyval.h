// Keyvals of every object kind (MPI-4.1 7.7.2): one process-wide registry that knows each keyval's
// kind and callbacks. Keyvals are process-wide because the ranks of a process are one MPI library
// instance: one rank may create a keyval and any rank of the process may use it.
//
// Numbers: 1..kFirstUserKeyval-1 are reserved for predefined attributes (MPI_TAG_UB ..
// MPI_LASTUSEDCODE of communicators today; the window attributes MPI_WIN_BASE .. take numbers from
// this range too); keyvals the program creates follow, whatever their kind.
#pragma once

#include <optional>
#include <string_view>
#include <variant>

#include "mpi.h"

namespace weft::mpi {

enum class ObjectKind { comm, datatype, win };

// The typed callbacks of each kind of object, and how the calls of that kind name things.
template <class Handle>
struct AttributeTraits;

template <>
struct AttributeTraits<MPI_Comm> {
  using Copy = MPI_Comm_copy_attr_function;
  using Delete = MPI_Comm_delete_attr_function;
  static constexpr ObjectKind kind = ObjectKind::comm;
  static constexpr std::string_view keyval_argument = "comm_keyval";
  static constexpr std::string_view create_call = "MPI_Comm_create_keyval";
};

template <>
struct AttributeTraits<MPI_Datatype> {
  using Copy = MPI_Type_copy_attr_function;
  using Delete = MPI_Type_delete_attr_function;
  static constexpr ObjectKind kind = ObjectKind::datatype;
  static constexpr std::string_view keyval_argument = "type_keyval";
  static constexpr std::string_view create_call = "MPI_Type_create_keyval";
};

template <>
struct AttributeTraits<MPI_Win> {
  using Copy = MPI_Win_copy_attr_function;
  using Delete = MPI_Win_delete_attr_function;
  static constexpr ObjectKind kind = ObjectKind::win;
  static constexpr std::string_view keyval_argument = "win_keyval";
  static constexpr std::string_view create_call = "MPI_Win_create_keyval";
};

// Null callbacks behave as the predefined null ones.
template <class Handle>
struct Callbacks {
  typename AttributeTraits<Handle>::Copy* copy = nullptr;
  typename AttributeTraits<Handle>::Delete* remove = nullptr;
};

// What MPI_<Kind>_create_keyval registered. The variant's index is the ObjectKind.
struct Keyval {
  std::variant<Callbacks<MPI_Comm>, Callbacks<MPI_Datatype>, Callbacks<MPI_Win>> callbacks;
  void* extra_state = nullptr;

  ObjectKind kind() const { return static_cast<ObjectKind>(callbacks.index()); }
};

constexpr int kFirstUserKeyval = 64;

// MPI_TAG_UB .. MPI_LASTUSEDCODE: read-only attributes of MPI_COMM_WORLD.
constexpr bool is_predefined_keyval(int keyval) {
  return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

// A number reserved for a predefined attribute of some kind.
constexpr bool is_reserved_keyval(int keyval) {
  return keyval > 0 && keyval < kFirstUserKeyval;
}

// The registry of keyvals.
namespace keyvals {

int create(const Keyval& keyval);
// The keyval when it exists and its MPI_<Kind>_free_keyval has not been called.
std::optional<Keyval> live(int id);
// A keyval that some attribute still uses: it outlives MPI_<Kind>_free_keyval until the last such
// attribute is deleted (MPI-4.1 7.7.2), so that its callbacks can still run.
Keyval attached(int id);
// False when `id` is unknown, reserved, of another kind, or freed and forgotten (no attribute used
// it any more). Freeing a freed keyval that an attribute still uses does nothing.
bool free(int id, ObjectKind kind);
// Counts the attributes set with a keyval; the last detach of a freed keyval forgets it.
void attach(int id);
void detach(int id);

}  // namespace keyvals

}  // namespace weft::mpi
