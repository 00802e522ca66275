// MPI_Op_create, MPI_Op_free, MPI_Op_commutative and MPI_Reduce_local (MPI-3.1 5.9.5-5.9.7).
// Operations belong to no communicator: their errors go to MPI_COMM_WORLD's handler.
#include <string>

#include "datatype/datatype.h"
#include "errhan/error.h"
#include "op/op.h"
#include "op/op_object.h"
#include "util/profiling.h"

namespace {

int fail(std::string_view function, int error_class, const std::string& detail) {
  return weft::mpi::raise(MPI_COMM_WORLD, function, error_class, detail);
}

bool predefined(MPI_Op op) {
  return op->kind != weft::mpi::OpKind::user;
}

}  // namespace

extern "C" int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  constexpr std::string_view kFunction = "MPI_Op_create";
  if (user_fn == nullptr) {
    return fail(kFunction, MPI_ERR_ARG, "user_fn = NULL, expected a function");
  }
  if (op == nullptr) return fail(kFunction, MPI_ERR_ARG, "op = NULL, expected a pointer");
  *op = new weft_mpi_op{weft::mpi::OpKind::user, user_fn, commute != 0, "user operation"};
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Op_create);

extern "C" int PMPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
  constexpr std::string_view kFunction = "MPI_Op_create_c";
  if (user_fn == nullptr) {
    return fail(kFunction, MPI_ERR_ARG, "user_fn = NULL, expected a function");
  }
  if (op == nullptr) return fail(kFunction, MPI_ERR_ARG, "op = NULL, expected a pointer");
  *op = new weft_mpi_op{weft::mpi::OpKind::user, nullptr, commute != 0, "user operation"};
  (*op)->large_function = user_fn;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Op_create_c);

extern "C" int PMPI_Op_free(MPI_Op* op) {
  constexpr std::string_view kFunction = "MPI_Op_free";
  if (op == nullptr) return fail(kFunction, MPI_ERR_ARG, "op = NULL, expected a pointer");
  if (int rc = weft::mpi::check_op(MPI_COMM_WORLD, kFunction, *op); rc != MPI_SUCCESS) return rc;
  if (predefined(*op)) {
    return fail(kFunction, MPI_ERR_OP,
                "*op = " + std::string((*op)->name) +
                    ", expected a user operation (predefined ones cannot be freed)");
  }
  // Pending operations that use it hold references of their own.
  weft::mpi::release(*op);
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Op_free);

extern "C" int PMPI_Op_commutative(MPI_Op op, int* commute) {
  constexpr std::string_view kFunction = "MPI_Op_commutative";
  if (int rc = weft::mpi::check_op(MPI_COMM_WORLD, kFunction, op); rc != MPI_SUCCESS) return rc;
  if (commute == nullptr) return fail(kFunction, MPI_ERR_ARG, "commute = NULL, expected a pointer");
  *commute = weft::mpi::commutative(op) ? 1 : 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Op_commutative);

extern "C" int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op) {
  constexpr std::string_view kFunction = "MPI_Reduce_local";
  if (int rc = weft::mpi::check_count(MPI_COMM_WORLD, kFunction, "count", count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_datatype(MPI_COMM_WORLD, kFunction, "datatype", datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_op(MPI_COMM_WORLD, kFunction, op); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_buffer(MPI_COMM_WORLD, kFunction, "inbuf", inbuf, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc =
          weft::mpi::check_buffer(MPI_COMM_WORLD, kFunction, "inoutbuf", inoutbuf, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (weft::mpi::apply(op, inbuf, inoutbuf, static_cast<std::size_t>(count), datatype) !=
      MPI_SUCCESS) {
    const std::string type_name(datatype->name());
    return fail(kFunction, MPI_ERR_OP,
                "op = " + std::string(weft::mpi::name(op)) + " is not defined on " +
                    (type_name.empty() ? std::string("this derived datatype") : type_name) +
                    ", expected an operation of MPI-3.1 5.9.2 for the type (or a user operation)");
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Reduce_local);
