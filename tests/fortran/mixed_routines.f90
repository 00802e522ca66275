! Fortran routines that a C main calls (mixed_main.c), on the communicators it hands over.
subroutine ring_sum(comm, value, total)
  use mpi
  implicit none
  integer, intent(in) :: comm, value
  integer, intent(out) :: total
  integer :: ierr
  call MPI_Allreduce(value, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
end subroutine ring_sum

subroutine split_even_odd(comm, newcomm)
  use mpi
  implicit none
  integer, intent(in) :: comm
  integer, intent(out) :: newcomm
  integer :: ierr, rank
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_split(comm, mod(rank, 2), rank, newcomm, ierr)
end subroutine split_even_odd
