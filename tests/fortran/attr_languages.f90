! Attributes across languages (MPI-4.1 19.3.7): values set from Fortran (MPI_COMM_SET_ATTR,
! MPI_TYPE_SET_ATTR, MPI-1's MPI_ATTR_PUT, and copies made by MPI_COMM_DUP) read in C as the
! address of an integer holding them; a value set from C reads in Fortran as the pointer itself.
! attr_languages.c has the C side.
program attr_languages
  use mpi
  implicit none
  integer :: rank, errs, ierr, comm_keyval, type_keyval, mpi1_keyval, c_keyval, dup
  integer(kind=MPI_ADDRESS_KIND) :: value, extra, address
  logical :: flag
  errs = 0
  extra = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, comm_keyval, extra, ierr)
  value = 5555 + rank
  call MPI_Comm_set_attr(MPI_COMM_WORLD, comm_keyval, value, ierr)
  call c_comm_attr_is(MPI_COMM_WORLD, comm_keyval, value, errs)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, comm_keyval, value, flag, ierr)
  if (.not. flag .or. value /= 5555 + rank) errs = errs + 1
  ! The copy MPI_COMM_DUP_FN makes is Fortran's too.
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call c_comm_attr_is(dup, comm_keyval, value, errs)
  call MPI_Comm_get_attr(dup, comm_keyval, value, flag, ierr)
  if (.not. flag .or. value /= 5555 + rank) errs = errs + 1
  call MPI_Comm_free(dup, ierr)

  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, type_keyval, &
                              extra, ierr)
  value = -7
  call MPI_Type_set_attr(MPI_INTEGER, type_keyval, value, ierr)
  call c_type_attr_is(MPI_INTEGER, type_keyval, value, errs)
  call MPI_Type_delete_attr(MPI_INTEGER, type_keyval, ierr)

  call MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, mpi1_keyval, 0, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, mpi1_keyval, 77 + rank, ierr)
  call c_mpi1_attr_is(MPI_COMM_WORLD, mpi1_keyval, 77 + rank, errs)

  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, c_keyval, extra, ierr)
  call c_set_comm_attr(MPI_COMM_WORLD, c_keyval, address)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, c_keyval, value, flag, ierr)
  if (.not. flag .or. value /= address) errs = errs + 1

  call MPI_Comm_delete_attr(MPI_COMM_WORLD, comm_keyval, ierr)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, c_keyval, ierr)
  call MPI_Attr_delete(MPI_COMM_WORLD, mpi1_keyval, ierr)
  call MPI_Comm_free_keyval(comm_keyval, ierr)
  call MPI_Comm_free_keyval(c_keyval, ierr)
  call MPI_Type_free_keyval(type_keyval, ierr)
  call MPI_Keyval_free(mpi1_keyval, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (errs == 0) then
      print '(a)', ' No Errors'
    else
      print '(a, i0, a)', ' Found ', errs, ' errors'
    end if
  end if
  call MPI_Finalize(ierr)
end program attr_languages
