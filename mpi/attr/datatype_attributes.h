// Attributes on datatypes. A datatype handle belongs to the rank that made it, but the predefined
// ones are shared constants of the process that every rank sees as its own: so each rank keeps
// the attribute sets of the datatypes it has set attributes on in a table of its own
// (RankState::type_attributes), rather than the datatype holding one set for everybody.
#pragma once

#include <memory>
#include <string_view>
#include <unordered_map>

#include "attr/attribute_set.h"
#include "mpi.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

class DatatypeAttributes {
 public:
  // The set of `type`, made empty on first use.
  AttributeSet& of(MPI_Datatype type);
  // nullptr when no attribute was ever set on `type`.
  AttributeSet* find(MPI_Datatype type);
  // Drops the set of a freed type (its attributes were deleted first).
  void forget(MPI_Datatype type);

 private:
  weft::detail::SpinLock lock_;  // the threads of a rank may set attributes at once
  // Sets are held by pointer so that one stays put while its callbacks run without the lock.
  std::unordered_map<MPI_Datatype, std::unique_ptr<AttributeSet>> sets_;
};

// MPI_Type_dup's part: copies the caller's attributes of `oldtype` onto `newtype` through the
// copy callbacks. A failing callback's code is raised (on MPI_COMM_WORLD, where datatype errors
// go) and returned; nothing stays copied then.
int copy_type_attributes(MPI_Datatype oldtype, MPI_Datatype newtype, std::string_view function);

// MPI_Type_free's part, before the type is released: the delete callbacks of the caller's
// attributes on `type`, last set first. A failing callback's code is raised and returned, and the
// type must not be freed.
int delete_type_attributes(MPI_Datatype type, std::string_view function);

}  // namespace weft::mpi
