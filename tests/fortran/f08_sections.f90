! mpi_f08 with non-contiguous array sections as buffers: gfortran passes a section's descriptor as
! it is, and MPI_SUBARRAYS_SUPPORTED is .false., so weft sends and receives through a contiguous
! copy of its elements; a nonblocking receive's copy goes back into the section when the request
! completes.
program f08_sections
  use mpi_f08
  implicit none
  integer :: rank, size, next, prev, errs, i, j
  integer :: a(10), b(10), grid(6, 4), c(6, 4)
  double precision :: x(8), y(8)
  type(MPI_Request) :: requests(2)
  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  next = mod(rank + 1, size)
  prev = mod(rank + size - 1, size)

  ! Every other element, blocking.
  a = [(100 * rank + i, i = 1, 10)]
  b = -1
  call MPI_Sendrecv(a(1:9:2), 5, MPI_INTEGER, next, 1, b(2:10:2), 5, MPI_INTEGER, prev, 1, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  do i = 1, 10
    if (mod(i, 2) == 0) then
      if (b(i) /= 100 * prev + i - 1) errs = errs + 1
    else
      if (b(i) /= -1) errs = errs + 1
    end if
  end do

  ! A two-dimensional section, nonblocking: the received elements land when MPI_Waitall returns.
  grid = reshape([(rank * 1000 + i, i = 1, 24)], [6, 4])
  c = -1
  call MPI_Irecv(c(1:5:2, 2:4:2), 6, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(grid(2:6:2, 1:3:2), 6, MPI_INTEGER, next, 2, MPI_COMM_WORLD, requests(2))
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
  do j = 1, 4
    do i = 1, 6
      if (mod(i, 2) == 1 .and. mod(j, 2) == 0) then
        if (c(i, j) /= prev * 1000 + (j - 2) * 6 + i + 1) errs = errs + 1
      else
        if (c(i, j) /= -1) errs = errs + 1
      end if
    end do
  end do

  ! A reduction over a row of a matrix (elements 6 apart).
  grid = rank
  call MPI_Allreduce(MPI_IN_PLACE, grid(3, :), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (any(grid(3, :) /= size * (size - 1) / 2) .or. any(grid(2, :) /= rank)) errs = errs + 1
  x = [(dble(i), i = 1, 8)]
  y = 0
  call MPI_Allreduce(x(8:1:-2), y(1:4), 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (any(abs(y(1:4) - size * [8d0, 6d0, 4d0, 2d0]) > 0.5d0)) errs = errs + 1

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (errs == 0) then
      print '(a)', ' No Errors'
    else
      print '(a, i0, a)', ' Found ', errs, ' errors'
    end if
  end if
  call MPI_Finalize()
end program f08_sections
