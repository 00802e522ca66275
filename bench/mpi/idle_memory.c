/* The resident memory of this process once every rank has initialised and met at a barrier:
 * rank 0 reads VmRSS from /proc/self/status and prints `RESULT process_rss <KiB> KiB`. Under
 * weft all ranks share one process, so running it with 1 and with 1024 ranks gives the memory an
 * idle rank costs; under a process-based MPI it is one rank's process. */
#include "bench_mpi.h"

static long resident_kib(void) {
  FILE* status = fopen("/proc/self/status", "r");
  if (status == NULL) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, status) != NULL) {
    if (strncmp(line, "VmRSS:", 6) == 0) {
      kib = strtol(line + 6, NULL, 10);
      break;
    }
  }
  fclose(status);
  return kib;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const long kib = resident_kib();
    if (kib < 0) bench_fail("cannot read VmRSS from /proc/self/status", rank);
    bench_result("process_rss", (double)kib, "KiB");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
