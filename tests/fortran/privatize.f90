! Fortran's globals in a weftfort build: a COMMON block, a module variable and a SAVE variable
! are per rank, as a process-based MPI gives each process its own. Each rank writes its rank into
! all three, waits until every rank has written, and checks that it still reads its own values.
! With the argument "shared" (a --no-privatize build on one virtual processor) it checks the
! opposite: one copy for all ranks, so the last writer's value is what every rank reads.
module privatize_state
  implicit none
  integer :: module_value = -1
end module privatize_state

integer function saved_value(new_value)
  implicit none
  integer, intent(in) :: new_value
  integer, save :: value = -1
  if (new_value >= 0) value = new_value
  saved_value = value
end function saved_value

program privatize
  use mpi
  use privatize_state
  implicit none
  integer :: common_value
  common /privatize_block/ common_value
  integer :: ierr, rank, size, errs, total, ignored, saved
  integer, external :: saved_value
  character(len=16) :: mode
  logical :: shared

  call get_command_argument(1, mode)
  shared = mode == 'shared'
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  errs = 0
  common_value = rank
  module_value = rank
  ignored = saved_value(rank)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  saved = saved_value(-1)
  if (shared) then
    ! One copy: all ranks read the same value (whoever wrote last).
    call MPI_Allreduce(common_value + module_value + saved, total, 1, MPI_INTEGER, MPI_SUM, &
                       MPI_COMM_WORLD, ierr)
    if (size > 1 .and. total /= size * 3 * common_value) errs = errs + 1
    if (size > 1 .and. (module_value /= common_value .or. saved /= common_value)) errs = errs + 1
  else
    if (common_value /= rank) errs = errs + 1
    if (module_value /= rank) errs = errs + 1
    if (saved /= rank) errs = errs + 1
  end if
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (errs == 0) then
      print '(a)', ' No Errors'
    else
      print '(a,i0,a)', ' Found ', errs, ' errors'
    end if
  end if
  call MPI_Finalize(ierr)
  if (errs /= 0) stop 1
end program privatize
