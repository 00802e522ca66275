/* Programs that hang in MPI, and one that only looks as if it might, for the deadlock report's
 * checks (tests/tools/deadlock_checks.sh). argv[1] picks the case:
 *   recv_cycle    ranks 0 and 1 each receive from the other first (the rest finish)
 *   barrier_short every rank but the last enters MPI_Barrier; the last returns
 *   any_source    rank 0 receives from MPI_ANY_SOURCE, tag 5; nobody sends
 *   unmatched     like recv_cycle on 2 ranks, rank 1 first sending rank 0 a message of tag 8
 *   crash         rank 1 crashes (SIGSEGV) while the others wait in MPI_Recv from it
 *   live          the last rank computes for argv[2] seconds, then sends to rank 0, which waits
 *                 for it while every other rank waits in a barrier: never a deadlock
 *   parked        every rank but 0 waits in MPI_Recv from rank 0, which prints "ready" and waits
 *                 for argv[2] seconds of sleep before sending: for stack dumps
 *   parked_omp    the same after an OpenMP parallel region of OMP_NUM_THREADS threads per rank,
 *                 whose workers stay parked in the rank's pool: for weft-info placement --pid
 *   win_lock      rank 0 locks rank 1's window exclusively and prints "ready"; rank 1 then waits
 *                 in MPI_Win_lock for it. With argv[2] > 0 rank 0 unlocks after that many
 *                 seconds; with 0 it waits in MPI_Recv from rank 1 instead, for ever (2 ranks)
 *   ibarrier_short every rank but the last waits for MPI_Ibarrier; the last returns
 *   file_short    every rank but the last writes to a file with MPI_File_write_at_all; the last
 *                 returns (argv[2]: the file)
 *   accept        rank 0 waits in MPI_Comm_accept for a connect that never comes, rank 1 in
 *                 MPI_Recv from rank 0 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Keeps the core busy without a single MPI call or system call. */
static double compute(double seconds) {
  volatile double x = 0;
  const double end = now() + seconds;
  while (now() < end) {
    for (int i = 0; i < 100000; ++i) x += (double)i * 1e-9;
  }
  return x;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, value = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "recv_cycle") == 0) {
    if (rank < 2) {
      MPI_Recv(&value, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&value, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "barrier_short") == 0) {
    if (rank != size - 1) MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "ibarrier_short") == 0) {
    if (rank != size - 1) {
      MPI_Request request;
      MPI_Ibarrier(MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
  } else if (strcmp(mode, "any_source") == 0) {
    if (rank == 0)
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (strcmp(mode, "unmatched") == 0) {
    /* Rank 1's tag-8 message stays unreceived: rank 0 waits for tag 7. */
    if (rank == 1) MPI_Send(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    if (rank < 2) {
      MPI_Recv(&value, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (strcmp(mode, "crash") == 0) {
    /* The other ranks wait for rank 1, which crashes. */
    if (rank == 1) {
      compute(0.5);
      *(volatile int*)(size_t)argc = 0;
    } else {
      MPI_Recv(&value, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (strcmp(mode, "live") == 0) {
    const double seconds = argc > 2 ? atof(argv[2]) : 10.0;
    if (rank == size - 1) {
      value = (int)compute(seconds) + 1;
      MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 0) {
      MPI_Recv(&value, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("live job done\n");
  } else if (strcmp(mode, "parked") == 0 || strcmp(mode, "parked_omp") == 0) {
    if (strcmp(mode, "parked_omp") == 0) {
      int threads = 0;
#pragma omp parallel
      {
#pragma omp atomic
        threads++;
      }
      if (threads < 2) fprintf(stderr, "deadlock_cases: rank %d ran 1 OpenMP thread\n", rank);
    }
    if (rank == 0) {
      printf("ready\n");
      fflush(stdout);
      sleep(argc > 2 ? (unsigned)atoi(argv[2]) : 5);
      for (int r = 1; r < size; ++r) MPI_Send(&value, 1, MPI_INT, r, 3, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&value, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (strcmp(mode, "win_lock") == 0) {
    const int seconds = argc > 2 ? atoi(argv[2]) : 0;
    int* memory = NULL;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    if (rank == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      printf("ready\n");
      fflush(stdout);
      if (seconds == 0) {
        MPI_Recv(&value, 1, MPI_INT, 1, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        sleep((unsigned)seconds);
      }
      MPI_Win_unlock(1, win);
    } else if (rank == 1) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
      MPI_Win_unlock(1, win);
    }
    MPI_Win_free(&win);
  } else if (strcmp(mode, "file_short") == 0) {
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, argc > 2 ? argv[2] : "file_short.out",
                  MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
    if (rank != size - 1) {
      MPI_File_write_at_all(file, (MPI_Offset)rank * (MPI_Offset)sizeof value, &value, 1, MPI_INT,
                            MPI_STATUS_IGNORE);
      MPI_File_close(&file);
    }
  } else if (strcmp(mode, "accept") == 0) {
    if (rank == 0) {
      char port[MPI_MAX_PORT_NAME];
      MPI_Comm client;
      MPI_Open_port(MPI_INFO_NULL, port);
      MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &client);
    } else if (rank == 1) {
      MPI_Recv(&value, 1, MPI_INT, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else {
    fprintf(stderr, "deadlock_cases: unknown case '%s'\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
