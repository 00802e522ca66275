// The MPI-1 names that MPI-3.0 removed (MPI-4.1 17.2) and both MPICH and Open MPI still export:
// programs and test suites written against MPI-1 (MPICH's own dtpools among them) call them.
// Each is the call that replaced it, under the old name; an error is raised by that call, which
// names itself.
#include "mpi.h"
#include "util/profiling.h"

extern "C" int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                 MPI_Datatype* newtype) {
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_hvector);

extern "C" int PMPI_Type_hindexed(int count, int array_of_blocklengths[],
                                  MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype* newtype) {
  return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                   newtype);
}
WEFT_MPI_ALIAS(MPI_Type_hindexed);

extern "C" int PMPI_Type_struct(int count, int array_of_blocklengths[],
                                MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[],
                                MPI_Datatype* newtype) {
  return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                 array_of_types, newtype);
}
WEFT_MPI_ALIAS(MPI_Type_struct);

extern "C" int PMPI_Address(void* location, MPI_Aint* address) {
  return PMPI_Get_address(location, address);
}
WEFT_MPI_ALIAS(MPI_Address);

extern "C" int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  MPI_Aint lb = 0;
  return PMPI_Type_get_extent(datatype, &lb, extent);
}
WEFT_MPI_ALIAS(MPI_Type_extent);

extern "C" int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint extent = 0;
  return PMPI_Type_get_extent(datatype, displacement, &extent);
}
WEFT_MPI_ALIAS(MPI_Type_lb);

extern "C" int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  const int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
  if (rc == MPI_SUCCESS) *displacement = lb + extent;
  return rc;
}
WEFT_MPI_ALIAS(MPI_Type_ub);

extern "C" int PMPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
  return PMPI_Comm_create_errhandler(function, errhandler);
}
WEFT_MPI_ALIAS(MPI_Errhandler_create);

extern "C" int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}
WEFT_MPI_ALIAS(MPI_Errhandler_set);

extern "C" int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}
WEFT_MPI_ALIAS(MPI_Errhandler_get);
