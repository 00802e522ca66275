/* Many ranks in one process: Init, one Allreduce, Finalize, as bench/mpi/init_allreduce.c. Once
 * the Allreduce is done every rank has started (its copy of the program and its stack exist), and
 * rank 0 prints how many memory mappings the process has then ("ranks <n> mappings <lines of
 * /proc/self/maps>"): tests/programs/many_ranks_check.sh compares two sizes of job. */
#include <mpi.h>
#include <stdio.h>

static int count_mappings(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return -1;
  int lines = 0;
  for (int c; (c = fgetc(maps)) != EOF;) lines += c == '\n';
  fclose(maps);
  return lines;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long value = rank;
  long sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (sum != (long)size * (size - 1) / 2) {
    fprintf(stderr, "rank %d: Allreduce gave %ld, expected %ld\n", rank, sum,
            (long)size * (size - 1) / 2);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) printf("ranks %d mappings %d\n", size, count_mappings());
  MPI_Finalize();
  return 0;
}
