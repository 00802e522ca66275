// The attributes cached on one object (MPI-4.1 7.7), for any kind of object: a communicator
// member's slot, a datatype, a window. An object embeds one AttributeSet per MPI process that
// sees it (for objects shared by the ranks of a process, one per member, as weft_mpi_comm::Local
// does) and calls the functions below from its MPI calls:
//
//   MPI_X_create_keyval / free_keyval   -> create_keyval<MPI_X>, free_keyval<MPI_X>
//   MPI_X_set_attr / get_attr / delete_attr -> set_attribute, get_attribute, delete_attribute
//   the call that duplicates the object -> copy_attributes (the copy callbacks, in set order)
//   the call that frees the object      -> delete_attributes first (the delete callbacks, last
//                                          set first), and frees nothing if it fails
//
// Each returns an Outcome: MPI_SUCCESS, or the error class (the call's, or the code a callback
// returned) with the text to raise it with on the object's error handler. The predefined
// attributes of a kind (read-only, never in a set) are the caller's: answer them before
// get_attribute, which refuses reserved keyvals.
//
// Thread safety: a set's own lock guards its entries; callbacks run outside it, so a callback may
// set or get attributes on the same object. Concurrent calls on the same attribute are the
// program's race, as MPI-4.1 says for any object.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attr/keyval.h"
#include "mpi.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

// The language a value was set or is read from (MPI-4.1 19.3.7). C sets and gets a void*;
// Fortran an integer (MPI_COMM_SET_ATTR's INTEGER(KIND=MPI_ADDRESS_KIND), MPI_ATTR_PUT's INTEGER),
// stored as the void* of that value. A value set from Fortran and read from C reads as the address
// of an integer holding it (as MPICH and Open MPI do; MPI-4.1's examples of attributes across
// languages read it so); every other pair reads the value as it was set.
enum class AttributeLanguage { c, fortran };

struct Outcome {
  int code = MPI_SUCCESS;
  std::string detail;  // what to raise `code` with
  bool ok() const { return code == MPI_SUCCESS; }
};

class AttributeSet {
 public:
  AttributeSet() = default;
  // Objects keep their sets in vectors; a set is moved only before any rank uses it.
  AttributeSet(AttributeSet&& other) noexcept;
  AttributeSet& operator=(AttributeSet&&) = delete;
  // Drops what is left without callbacks (the object ends without a free call, as MPI_COMM_WORLD
  // and predefined datatypes do when the job ends).
  ~AttributeSet();

  bool empty() const;

  struct Entry {
    int keyval;
    void* value;
    // Set from Fortran: the integer, where a C get points (little-endian, so an int* to it also
    // reads MPI_ATTR_PUT's INTEGER). Shared by the snapshots entries() hands out.
    std::shared_ptr<MPI_Aint> fortran_value;
  };
  // Copies of the entries in set order.
  std::vector<Entry> entries() const;
  // False when `keyval` is not set. The value as a get from `reader` reads it (AttributeLanguage);
  // callbacks get it as it was set, which is Fortran's reading.
  bool find(int keyval, void** value, AttributeLanguage reader = AttributeLanguage::c) const;
  // Stores a new attribute or replaces the value of one, keeping its place in the set order.
  // The keyval's attach count goes up only for a new one.
  void put(int keyval, void* value, AttributeLanguage writer = AttributeLanguage::c);
  // Removes `keyval` if present; true when it was.
  bool erase(int keyval);

 private:
  mutable weft::detail::SpinLock lock_;
  std::vector<Entry> entries_;  // in the order they were first set
};

template <class Handle>
Outcome create_keyval(typename AttributeTraits<Handle>::Copy* copy,
                      typename AttributeTraits<Handle>::Delete* remove, int* keyval,
                      void* extra_state);
// Sets *keyval to MPI_KEYVAL_INVALID.
template <class Handle>
Outcome free_keyval(int* keyval);
// Replacing a value runs the delete callback on the old one first (MPI-4.1 7.7.2).
template <class Handle>
Outcome set_attribute(AttributeSet& set, Handle object, int keyval, void* value,
                      AttributeLanguage writer = AttributeLanguage::c);
// attribute_val is a void**: where the value goes when *flag is set.
template <class Handle>
Outcome get_attribute(const AttributeSet& set, int keyval, void* attribute_val, int* flag,
                      AttributeLanguage reader = AttributeLanguage::c);
// Deleting an attribute that is not set does nothing (as MPICH): the standard names no error. The
// keyval may have been freed already while its attributes live.
template <class Handle>
Outcome delete_attribute(AttributeSet& set, Handle object, int keyval);
// Copies `from` (attributes of `parent`) into `to` (of `child`) through the copy callbacks (a
// copy keeps the language of its original). A failing callback deletes what was copied again and
// fails the call with its code.
template <class Handle>
Outcome copy_attributes(const AttributeSet& from, Handle parent, AttributeSet& to, Handle child);
// Runs the delete callbacks, last set first, removing each. A failing callback stops there: the
// remaining attributes stay and its code fails the call.
template <class Handle>
Outcome delete_attributes(AttributeSet& set, Handle object);

}  // namespace weft::mpi
