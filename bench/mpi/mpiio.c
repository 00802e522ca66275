/* Collective MPI-IO bandwidth (bench/mpi/mpiio_run): a 3-D array of doubles, block-distributed
 * over the ranks (MPI_Dims_create), written and read with one MPI_File_write_at_all /
 * MPI_File_read_at_all (offset 0) through a subarray view per rank; many small independent writes
 * (8-byte records at interleaved explicit offsets); and the disk's own bandwidth for the same
 * bytes, one large sequential write by one rank with plain POSIX calls. No sync in any of them:
 * each measures what reaches the kernel's page cache, alike for every implementation.
 *
 *   mpiio <folder> <edge> <small writes per rank> <repetitions>
 *
 * Prints `RESULT <metric> <value> <unit>` lines from rank 0 (the best of the repetitions). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double seconds_of(double start) {
  return MPI_Wtime() - start;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: mpiio <folder> <edge> <small writes> <repetitions>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int edge = atoi(argv[2]), small = atoi(argv[3]), repetitions = atoi(argv[4]);
  char path[4096];
  snprintf(path, sizeof path, "%s/mpiio_bench.dat", argv[1]);

  int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
  MPI_Dims_create(size, 3, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  MPI_Cart_coords(cart, rank, 3, coords);
  int sizes[3], subsizes[3], starts[3];
  long long local = 1;
  for (int d = 0; d < 3; ++d) {
    sizes[d] = edge;
    subsizes[d] = edge / dims[d];
    starts[d] = coords[d] * subsizes[d];
    local *= subsizes[d];
  }
  MPI_Datatype block;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &block);
  MPI_Type_commit(&block);
  double* data = malloc((size_t)local * sizeof(double));
  for (long long i = 0; i < local; ++i) data[i] = (double)(rank * local + i);
  const double bytes = (double)local * size * sizeof(double);

  double best_write = 1e30, best_read = 1e30, best_small = 1e30, best_disk = 1e30;
  int errors = 0;
  for (int r = 0; r < repetitions; ++r) {
    if (rank == 0) unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, block, "native", MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    MPI_File_write_at_all(fh, 0, data, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = seconds_of(start);
    if (t < best_write) best_write = t;

    double* back = calloc((size_t)local, sizeof(double));
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    MPI_File_read_at_all(fh, 0, back, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    t = seconds_of(start);
    if (t < best_read) best_read = t;
    if (memcmp(back, data, (size_t)local * sizeof(double)) != 0) ++errors;
    free(back);

    /* Many small writes: record i of rank r at (i * size + r) * 8. */
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int i = 0; i < small; ++i) {
      const double record = (double)i;
      MPI_File_write_at(fh, ((MPI_Offset)i * size + rank) * 8, &record, 1, MPI_DOUBLE,
                        MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t = seconds_of(start);
    if (t < best_small) best_small = t;
    MPI_File_close(&fh);

    /* The disk's own: the same bytes in one sequential write by rank 0. */
    if (rank == 0) {
      unlink(path);
      char* all = malloc((size_t)bytes);
      memset(all, 1, (size_t)bytes);
      const int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
      start = MPI_Wtime();
      size_t done = 0;
      while (done < (size_t)bytes) {
        const ssize_t n = write(fd, all + done, (size_t)bytes - done);
        if (n <= 0) break;
        done += (size_t)n;
      }
      t = seconds_of(start);
      close(fd);
      free(all);
      if (t < best_disk) best_disk = t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int total_errors = 0;
  MPI_Reduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    unlink(path);
    if (total_errors != 0) {
      fprintf(stderr, "mpiio: %d ranks read back data that differs from what they wrote\n",
              total_errors);
    }
    printf("RESULT write %.1f MB/s\n", bytes / best_write / 1e6);
    printf("RESULT read %.1f MB/s\n", bytes / best_read / 1e6);
    printf("RESULT small_writes %.0f writes/s\n", (double)small * size / best_small);
    printf("RESULT disk %.1f MB/s\n", bytes / best_disk / 1e6);
  }
  free(data);
  MPI_Type_free(&block);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return total_errors != 0 && rank == 0 ? 1 : 0;
}
