/* An 8-byte ping-pong between ranks 0 and 1 of two processes in lock step, for counting
 * instructions (bench/mpi/ucx_instructions, under callgrind): each MPI_Recv is called only once
 * its message was sent, and each side waits for the other on a FIFO outside MPI, so no wait
 * spins for a time that callgrind's slowness or the machine's load decides. The counts per round
 * trip are then the same on a loaded machine: the send, the one progress call that finds the
 * message, the matching and the completion. `ucx_floor lockstep <trips>` does the same with UCX
 * alone.
 *
 * usage: lockstep <fifo to rank 1> <fifo to rank 0> <trips>. The FIFOs exist (mkfifo); they are
 * read and written with raw system calls, which no runtime intercepts: the waiting process blocks
 * in the kernel, its runtime's other threads asleep or blocked as they would be anyway. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void fail(const char* what) {
  fprintf(stderr, "lockstep: %s\n", what);
  exit(1);
}

static int open_fifo(const char* path, int flags) {
  const long fd = syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC);
  if (fd < 0) fail("a FIFO could not be opened");
  return (int)fd;
}

/* Not inlined: bench/mpi/ucx_instructions leaves their instructions out. */
__attribute__((noinline)) static void signal_peer(int fd) {
  const char token = 1;
  if (syscall(SYS_write, fd, &token, 1) != 1) fail("write to the FIFO failed");
}

__attribute__((noinline)) static void await_peer(int fd) {
  char token;
  if (syscall(SYS_read, fd, &token, 1) != 1) fail("the other rank went away");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 4) fail("usage: lockstep <fifo to rank 1> <fifo to rank 0> <trips>");
  const long trips = atol(argv[3]);
  char buffer[8] = {0};
  if (rank <= 1) {
    /* Rank 0 opens its writing end first and rank 1 its reading end first: opening a FIFO waits
     * for the other end. */
    const int to_one = open_fifo(argv[1], rank == 0 ? O_WRONLY : O_RDONLY);
    const int to_zero = open_fifo(argv[2], rank == 0 ? O_RDONLY : O_WRONLY);
    const int to_peer = rank == 0 ? to_one : to_zero;
    const int from_peer = rank == 0 ? to_zero : to_one;
    for (long trip = 0; trip < trips; ++trip) {
      if (rank == 0) {
        MPI_Send(buffer, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        signal_peer(to_peer);
        await_peer(from_peer);
        MPI_Recv(buffer, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        await_peer(from_peer);
        MPI_Recv(buffer, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        signal_peer(to_peer);
      }
    }
    close(to_one);
    close(to_zero);
  }
  MPI_Finalize();
  return 0;
}
