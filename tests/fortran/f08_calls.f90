! The mpi_f08 binding: handle types and their comparisons, TYPE(MPI_Status), assumed-rank
! buffers (C descriptors), MPI_IN_PLACE and MPI_STATUS_IGNORE, strings, optional ierror, the
! predefined attribute callbacks, PMPI_WTIME.
program f08_calls
  use mpi_f08
  implicit none
  type(MPI_Comm) :: dup
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: statuses(2)
  type(MPI_Datatype) :: vec
  integer :: rank, size, errs, next, prev, sbuf(4), rbuf(4), total, count
  double precision :: d(3), dsum(3)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  integer :: rlen, keyval
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: flag
  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  next = mod(rank + 1, size); prev = mod(rank + size - 1, size)
  sbuf = rank
  call MPI_Irecv(rbuf, 4, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, 4, MPI_INTEGER, next, 3, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, statuses)
  if (reqs(1) /= MPI_REQUEST_NULL) errs = errs + 1
  if (any(rbuf /= prev) .or. statuses(1)%MPI_SOURCE /= prev .or. statuses(1)%MPI_TAG /= 3) errs = errs + 1
  call MPI_Get_count(statuses(1), MPI_INTEGER, count)
  if (count /= 4) errs = errs + 1
  d = [1d0, 2d0, dble(rank)]
  call MPI_Allreduce(d, dsum, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (abs(dsum(3) - size * (size - 1) / 2) > 0.1) errs = errs + 1
  total = rank
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (total /= size * (size - 1) / 2) errs = errs + 1
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_set_name(dup, 'f08 dup')
  call MPI_Comm_get_name(dup, name, rlen)
  if (name /= 'f08 dup' .or. rlen /= 7) errs = errs + 1
  call MPI_Type_vector(2, 1, 2, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  sbuf = [1, 2, 3, 4]
  call MPI_Sendrecv(sbuf, 1, vec, rank, 9, rbuf, 2, MPI_INTEGER, rank, 9, dup, MPI_STATUS_IGNORE)
  if (rbuf(1) /= 1 .or. rbuf(2) /= 3) errs = errs + 1
  call MPI_Type_free(vec)
  if (vec /= MPI_DATATYPE_NULL) errs = errs + 1
  call MPI_Comm_free(dup)
  call MPI_Sizeof(d, count)
  if (count /= 8) errs = errs + 1
  call MPI_Sizeof(rank, count)
  if (count /= 4) errs = errs + 1
  ! The predefined attribute callbacks and PMPI_WTIME are in mpi_f08 too.
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, extra)
  extra = 31
  call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, extra)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_get_attr(dup, keyval, extra, flag)
  if (.not. flag .or. extra /= 31) errs = errs + 1
  call MPI_Comm_free(dup)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval)
  call MPI_Comm_free_keyval(keyval)
  d(1) = PMPI_Wtime()
  d(2) = PMPI_Wtick()
  if (d(1) <= 0d0 .or. d(2) <= 0d0) errs = errs + 1
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (errs == 0) then
      print '(a)', ' No Errors'
    else
      print *, 'Found', errs, 'errors'
    end if
  end if
  call MPI_Finalize()
end program f08_calls
