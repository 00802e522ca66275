/* The C side of attr_languages.f90: reads attributes the Fortran code set, and sets one it reads
 * (MPI-4.1 19.3.7). Called from Fortran: lower case, one underscore, arguments by reference. */
#include <mpi.h>

/* A value set from Fortran reads in C as the address of an integer holding it. */
void c_comm_attr_is_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* expected, MPI_Fint* errs) {
  MPI_Aint* value = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_Comm_f2c(*comm), *keyval, &value, &flag);
  if (!flag || value == NULL || *value != *expected) ++*errs;
}

void c_type_attr_is_(MPI_Fint* type, MPI_Fint* keyval, MPI_Aint* expected, MPI_Fint* errs) {
  MPI_Aint* value = NULL;
  int flag = 0;
  MPI_Type_get_attr(MPI_Type_f2c(*type), *keyval, &value, &flag);
  if (!flag || value == NULL || *value != *expected) ++*errs;
}

/* MPI_ATTR_PUT's value is a default INTEGER: C reads an int through the pointer. */
void c_mpi1_attr_is_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Fint* expected, MPI_Fint* errs) {
  int* value = NULL;
  int flag = 0;
  MPI_Attr_get(MPI_Comm_f2c(*comm), *keyval, &value, &flag);
  if (!flag || value == NULL || *value != *expected) ++*errs;
}

/* A value set from C reads in Fortran as the pointer itself, as an integer: `address` says which.
 */
static int c_value = 42;
void c_set_comm_attr_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* address) {
  MPI_Comm_set_attr(MPI_Comm_f2c(*comm), *keyval, &c_value);
  *address = (MPI_Aint)&c_value;
}
