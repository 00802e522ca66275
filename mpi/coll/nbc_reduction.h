// What the nonblocking reductions share (Ireduce, Iallreduce, Ireduce_scatter(_block), Iscan,
// Iexscan): every member's side is a Contribution with the operation and root, and the last
// member to arrive checks that the contributions agree before any piece reads them; when they do
// not, nothing is reduced and every member's request fails with MPI_ERR_TRUNCATE, as the blocking
// reductions report it.
#pragma once

#include <optional>
#include <string>

#include "coll/collective.h"
#include "coll/nbc.h"

namespace weft::mpi::nbc {

struct ReductionSide : collective::Contribution {
  MPI_Datatype datatype = MPI_DATATYPE_NULL;  // `type`, as the operations take it
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
};

// Side is ReductionSide or a struct derived from it.
template <class Side = ReductionSide>
class ReductionOp : public Sided<Side> {
 public:
  using Sided<Side>::Sided;

 protected:
  // By plan(): whether the contributions disagree with member `reference`'s (then there is no
  // work, and every member is told why).
  bool disagree(int reference) {
    mismatch_ = collective::find_mismatch(*this, reference);
    return mismatch_.has_value();
  }
  int outcome(int, std::string* reason) const override { return failure(reason); }
  // MPI_ERR_TRUNCATE with its reason when the contributions disagree, else MPI_SUCCESS.
  int failure(std::string* reason) const {
    if (!mismatch_) return MPI_SUCCESS;
    *reason = collective::mismatch_reason(*mismatch_);
    return MPI_ERR_TRUNCATE;
  }

 private:
  std::optional<collective::Mismatch> mismatch_;
};

// The side a member contributes to a reduction: sendbuf, or recvbuf with MPI_IN_PLACE.
inline ReductionSide contribution(const void* sendbuf, void* recvbuf, std::size_t count,
                                  MPI_Datatype datatype, MPI_Op op, int root) {
  ReductionSide side;
  side.input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  side.output = recvbuf;
  side.count = count;
  side.type = datatype;
  side.datatype = datatype;
  side.op = op;
  side.root = root;
  return side;
}

}  // namespace weft::mpi::nbc
