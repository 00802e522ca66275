/* `coll_instructions <collective> <calls>`: MPI_Init, one warm-up call, then <calls> calls of one
 * collective on MPI_COMM_WORLD, then MPI_Finalize: barrier, allreduce (8 B: one double,
 * MPI_SUM), alltoall (1 KiB per pair of ranks), bcast (8 B), reduce (8 B, MPI_SUM), allgather
 * (8 B per rank), bcast_1k (1 KiB) or allgather_1k (1 KiB per rank); or the nonblocking
 * ibarrier, ibcast, ireduce, iallreduce, igather, iscatter, iallgather or ialltoall (8 B per
 * rank, as the small cells of bench/mpi/nbc_run), each call followed by its MPI_Wait. A suffix
 * _<n>k on bcast, allgather or a nonblocking name but ibarrier moves n KiB per rank instead
 * (ibcast_1k ... ialltoall_1k: the 1 KiB cells of bench/mpi/nbc_run; a reduction's elements are
 * doubles).
 * bench/mpi/instructions_run counts the instructions of two such jobs under callgrind and divides
 * their difference by the calls between them: the instructions of one call on one rank, whatever
 * the startup costs and the machine's load. */
#include <ctype.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kAlltoallBytes = 1 << 10, kKiB = 1 << 10 };

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: coll_instructions <collective> <calls>\n");
    return 2;
  }
  /* The name without its _<n>k suffix, and the suffix's bytes per rank (1 KiB without one). */
  char name[64];
  snprintf(name, sizeof name, "%s", argv[1]);
  size_t kib_bytes = kKiB;
  char* suffix = strrchr(name, '_');
  const size_t length = strlen(name);
  if (suffix != NULL && isdigit((unsigned char)suffix[1]) && name[length - 1] == 'k') {
    kib_bytes = (size_t)atol(suffix + 1) * kKiB;
    strcpy(suffix, "_k");
  }
  const int kib_count = (int)kib_bytes;
  const long calls = atol(argv[2]);
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double value = 1.0;
  double result = 0.0;
  double* gathered = calloc((size_t)size, sizeof(double));
  const size_t block = kib_bytes > kAlltoallBytes ? kib_bytes : kAlltoallBytes;
  char* send = calloc((size_t)size, block);
  char* receive = calloc((size_t)size, block);
  char* kib = calloc(1, kib_bytes);
  char* kib_out = calloc(1, kib_bytes);
  int known = 1;
  for (long i = 0; i <= calls && known; ++i) {
    MPI_Request request = MPI_REQUEST_NULL;
    if (strcmp(name, "ibarrier") == 0) {
      MPI_Ibarrier(MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "ibcast") == 0) {
      MPI_Ibcast(&result, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "ireduce") == 0) {
      MPI_Ireduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "iallreduce") == 0) {
      MPI_Iallreduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "igather") == 0) {
      MPI_Igather(&value, 1, MPI_DOUBLE, gathered, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "iscatter") == 0) {
      MPI_Iscatter(gathered, 1, MPI_DOUBLE, &result, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "iallgather") == 0) {
      MPI_Iallgather(&value, 1, MPI_DOUBLE, gathered, 1, MPI_DOUBLE, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "ialltoall") == 0) {
      MPI_Ialltoall(send, 8, MPI_BYTE, receive, 8, MPI_BYTE, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "ibcast_k") == 0) {
      MPI_Ibcast(kib, kib_count, MPI_BYTE, 0, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "ireduce_k") == 0) {
      MPI_Ireduce(kib, kib_out, kib_count / 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "iallreduce_k") == 0) {
      MPI_Iallreduce(kib, kib_out, kib_count / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
    } else if (strcmp(name, "igather_k") == 0) {
      MPI_Igather(kib, kib_count, MPI_BYTE, receive, kib_count, MPI_BYTE, 0, MPI_COMM_WORLD,
                  &request);
    } else if (strcmp(name, "iscatter_k") == 0) {
      MPI_Iscatter(send, kib_count, MPI_BYTE, kib, kib_count, MPI_BYTE, 0, MPI_COMM_WORLD,
                   &request);
    } else if (strcmp(name, "iallgather_k") == 0) {
      MPI_Iallgather(kib, kib_count, MPI_BYTE, receive, kib_count, MPI_BYTE, MPI_COMM_WORLD,
                     &request);
    } else if (strcmp(name, "ialltoall_k") == 0) {
      MPI_Ialltoall(send, kib_count, MPI_BYTE, receive, kib_count, MPI_BYTE, MPI_COMM_WORLD,
                    &request);
    } else if (strcmp(name, "barrier") == 0) {
      MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(name, "allreduce") == 0) {
      MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(name, "alltoall") == 0) {
      MPI_Alltoall(send, kAlltoallBytes, MPI_BYTE, receive, kAlltoallBytes, MPI_BYTE,
                   MPI_COMM_WORLD);
    } else if (strcmp(name, "bcast") == 0) {
      MPI_Bcast(&result, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else if (strcmp(name, "reduce") == 0) {
      MPI_Reduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (strcmp(name, "allgather") == 0) {
      MPI_Allgather(&value, 1, MPI_DOUBLE, gathered, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    } else if (strcmp(name, "bcast_k") == 0) {
      MPI_Bcast(kib, kib_count, MPI_BYTE, 0, MPI_COMM_WORLD);
    } else if (strcmp(name, "allgather_k") == 0) {
      MPI_Allgather(kib, kib_count, MPI_BYTE, receive, kib_count, MPI_BYTE, MPI_COMM_WORLD);
    } else {
      known = 0;
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  free(gathered);
  free(send);
  free(receive);
  free(kib);
  free(kib_out);
  MPI_Finalize();
  if (!known) fprintf(stderr, "coll_instructions: unknown collective %s\n", name);
  return known ? 0 : 2;
}
