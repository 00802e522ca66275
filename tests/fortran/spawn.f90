! MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE from Fortran: CHARACTER argument vectors ended by a
! blank element, their blanks stripped, MPI_ARGV_NULL, MPI_ARGVS_NULL, MPI_ERRCODES_IGNORE. The
! program spawns itself; each child checks the arguments it got (each rank reads its own command
! line, also when the commands of one MPI_COMM_SPAWN_MULTIPLE get different ones) and that
! MPI_COMM_WORLD is its own world's, then sends its error count to the parents' rank 0.
program spawn
  use mpi
  implicit none
  integer :: parent, ierr
  call MPI_Init(ierr)
  call MPI_Comm_get_parent(parent, ierr)
  if (parent == MPI_COMM_NULL) then
    call parent_side()
  else
    call child_side(parent)
  end if
  call MPI_Finalize(ierr)

contains

  subroutine parent_side()
    character(len=256) :: command
    character(len=256) :: commands(2)
    character(len=12) :: argv(5), argvs(2, 3)
    integer :: rank, inter, errcodes(2), maxprocs(2), infos(2), errs, ierr
    errs = 0
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call get_command_argument(0, command)
    ! The arguments end at the first blank element: "ignored" is not passed.
    argv = [character(len=12) :: 'argv', '  two three', '-x  ', ' ', 'ignored']
    call MPI_Comm_spawn(command, argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
    if (ierr /= MPI_SUCCESS .or. any(errcodes /= MPI_SUCCESS)) errs = errs + 1
    call collect(inter, 2, errs)
    call MPI_Comm_spawn(command, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                        MPI_ERRCODES_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    call collect(inter, 1, errs)
    ! Row i holds the arguments of command i.
    commands = command
    argvs(1, :) = [character(len=12) :: 'multi1', ' beta ', ' ']
    argvs(2, :) = [character(len=12) :: 'multi2', ' ', 'ignored']
    maxprocs = [1, 2]
    infos = MPI_INFO_NULL
    call MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, inter, &
                                 MPI_ERRCODES_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    call collect(inter, 3, errs)
    call MPI_Comm_spawn_multiple(2, commands, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, &
                                 inter, MPI_ERRCODES_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    call collect(inter, 3, errs)
    call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      if (errs == 0) then
        print '(a)', ' No Errors'
      else
        print '(a, i0, a)', ' Found ', errs, ' errors'
      end if
    end if
  end subroutine parent_side

  ! The parents' rank 0 adds up the children's error counts.
  subroutine collect(inter, children, errs)
    integer, intent(inout) :: inter, errs
    integer, intent(in) :: children
    integer :: rank, remote, i, child_errs, ierr
    call MPI_Comm_rank(inter, rank, ierr)
    call MPI_Comm_remote_size(inter, remote, ierr)
    if (remote /= children) errs = errs + 1
    if (rank == 0) then
      do i = 0, remote - 1
        call MPI_Recv(child_errs, 1, MPI_INTEGER, i, 7, inter, MPI_STATUS_IGNORE, ierr)
        errs = errs + child_errs
      end do
    end if
    call MPI_Comm_disconnect(inter, ierr)
  end subroutine collect

  subroutine child_side(parent)
    integer, intent(inout) :: parent
    character(len=32) :: first, arg
    integer :: rank, size, appnum, errs, ierr
    logical :: flag
    integer(kind=MPI_ADDRESS_KIND) :: value
    errs = 0
    ! MPI_COMM_WORLD (the integer 1) is the child's world, not the parents'.
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, value, flag, ierr)
    appnum = int(value)
    ! Every child of the spawn has started (its main recorded its command line) before any reads
    ! its arguments.
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    first = ''
    if (command_argument_count() > 0) call get_command_argument(1, first)
    select case (first)
    case ('argv')
      if (command_argument_count() /= 3 .or. size /= 2) errs = errs + 1
      call get_command_argument(2, arg)
      if (arg /= 'two three') errs = errs + 1
      call get_command_argument(3, arg)
      if (arg /= '-x') errs = errs + 1
    case ('multi1')
      if (command_argument_count() /= 2 .or. appnum /= 0 .or. size /= 3) errs = errs + 1
      call get_command_argument(2, arg)
      if (arg /= 'beta') errs = errs + 1
    case ('multi2')
      if (command_argument_count() /= 1 .or. appnum /= 1 .or. size /= 3) errs = errs + 1
    case ('')
      ! MPI_ARGV_NULL (a world of 1) or MPI_ARGVS_NULL (a world of 3).
      if (size /= 1 .and. size /= 3) errs = errs + 1
    case default
      errs = errs + 1
    end select
    if (errs /= 0) print '(a, i0, 3a, i0)', 'child ', rank, ' of ', trim(first), ': errors ', errs
    call MPI_Send(errs, 1, MPI_INTEGER, 0, 7, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
  end subroutine child_side
end program spawn
