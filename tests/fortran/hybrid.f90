! A hybrid Fortran program: MPI ranks, each with an OpenMP team (weftfort -fopenmp: weft's
! omp_lib, no libgomp). Each thread adds its share of a sum; the master thread of each rank
! reduces across ranks (MPI_THREAD_FUNNELED); a lock and omp_get_thread_num are checked too.
program hybrid
  use mpi
  use omp_lib
  implicit none
  integer, parameter :: n = 100000
  integer :: ierr, rank, size, provided, errs, i, threads, hits
  integer(omp_lock_kind) :: lock
  double precision :: local, total, expected

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  errs = 0
  if (provided < MPI_THREAD_FUNNELED) errs = errs + 1

  local = 0
  threads = 0
  hits = 0
  call omp_init_lock(lock)
  !$omp parallel num_threads(3) reduction(+:local) shared(threads, hits)
  !$omp do
  do i = 1, n
    local = local + dble(i + rank)
  end do
  !$omp end do
  call omp_set_lock(lock)
  hits = hits + 1
  call omp_unset_lock(lock)
  if (omp_get_thread_num() == 0) threads = omp_get_num_threads()
  if (.not. omp_in_parallel()) errs = errs + 1
  !$omp end parallel
  call omp_destroy_lock(lock)
  if (threads /= 3 .or. hits /= 3) errs = errs + 1
  if (omp_in_parallel()) errs = errs + 1

  call MPI_Allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  expected = dble(size) * dble(n) * dble(n + 1) / 2 + dble(n) * dble(size * (size - 1) / 2)
  if (abs(total - expected) > 0.5d0) errs = errs + 1

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
end program hybrid
