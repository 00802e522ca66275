// What a pending operation keeps alive past MPI_Type_free and MPI_Op_free: the standard lets a
// program free a datatype or a user operation that a nonblocking or persistent operation still
// uses (MPI-4.1 5.1.9, 6.9.5), so the operation's request holds a reference to each until it goes.
#pragma once

#include "datatype/datatype.h"
#include "mpi.h"
#include "op/op.h"

namespace weft::mpi {

// The objects of one call: at most two datatypes (send and receive side) and an operation.
struct Kept {
  MPI_Datatype types[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
  MPI_Op op = MPI_OP_NULL;
};

// References held by a request; predefined objects cost nothing (they are never counted).
class KeepAlive {
 public:
  KeepAlive() = default;
  KeepAlive(const KeepAlive&) = delete;
  KeepAlive& operator=(const KeepAlive&) = delete;
  ~KeepAlive() { reset(); }

  // Takes references to `kept`'s objects, dropping those held before.
  void hold(const Kept& kept) {
    for (MPI_Datatype type : kept.types) {
      if (type != MPI_DATATYPE_NULL) type->retain();
    }
    if (kept.op != MPI_OP_NULL) retain(kept.op);
    reset();
    kept_ = kept;
  }
  void reset() {
    for (MPI_Datatype& type : kept_.types) {
      if (type != MPI_DATATYPE_NULL) type->release();
      type = MPI_DATATYPE_NULL;
    }
    if (kept_.op != MPI_OP_NULL) release(kept_.op);
    kept_.op = MPI_OP_NULL;
  }

 private:
  Kept kept_;
};

}  // namespace weft::mpi
