/* The kernel's CPU for the same 16 MiB written into a fresh file by calls of different shapes
 * (bench/run writeshapes): the disk figure of bench/mpi/mpiio.c (one write(2) of it all) against
 * the calls of a collective write's windows (mpi/io/collective_buffer.h). Thread CPU time, user
 * and system, which the load of a shared machine moves less than the wall clock; each trial
 * writes every shape once, in an order that rotates from trial to trial.
 *
 *   write_shapes [folder (default /tmp)] [trials (default 41)]
 *
 * The windows are 256 KiB doubling to 4 MiB, either each starting where the previous ended (the
 * windows before "Ranges first" in docs/mpi-io.md) or each ending at a multiple of its size; a
 * window is one pwrite of contiguous memory (a filled collective buffer) or pwritev calls of
 * IOV_MAX vectors taken alternately from two sources (a direct window of two ranks' rows).
 * Prints each shape's median and its ratio to the one write, and `RATIO write_shapes_<shape>
 * one_write/shape <value>` lines (above 1: the shape is cheaper). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BYTES (16u << 20)
#define FIRST (256u << 10)
#define LARGEST (4u << 20)
#define VECTORS 1024
#define MAX_TRIALS 201

struct shape {
  const char* name;
  int aligned;  /* windows end at a multiple of their size */
  size_t piece; /* 0: one pwrite a window; else pwritev of pieces of this many bytes */
  int windows;  /* 0: one write(2) of everything */
};
static const struct shape shapes[] = {
    {"one_write", 0, 0, 0},
    {"windows_pwrite", 0, 0, 1},
    {"aligned_windows_pwrite", 1, 0, 1},
    {"windows_pwritev_512B", 0, 512, 1},
    {"aligned_windows_pwritev_512B", 1, 512, 1},
    {"aligned_windows_pwritev_4KiB", 1, 4096, 1},
};
#define SHAPES (sizeof shapes / sizeof shapes[0])

static char *contiguous, *rows[2];
static struct iovec iov[VECTORS];

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void write_window(int fd, size_t at, size_t size, size_t piece) {
  if (piece == 0) {
    if (pwrite(fd, contiguous + at, size, (off_t)at) != (ssize_t)size) exit(1);
    return;
  }
  for (size_t done = 0; done < size;) {
    size_t n = 0, bytes = 0;
    for (; n < VECTORS && done + bytes < size; ++n) {
      const size_t row = (at + done + bytes) / piece;
      iov[n].iov_base = rows[row % 2] + (row / 2 * piece) % (BYTES / 2);
      iov[n].iov_len = piece;
      bytes += piece;
    }
    if (pwritev(fd, iov, (int)n, (off_t)(at + done)) != (ssize_t)bytes) exit(1);
    done += bytes;
  }
}

static void write_shape(int fd, const struct shape* s) {
  if (!s->windows) {
    if (write(fd, contiguous, BYTES) != (ssize_t)BYTES) exit(1);
    return;
  }
  size_t size = FIRST;
  for (size_t at = 0; at < BYTES;) {
    size_t end = s->aligned ? (at / size + 1) * size : at + size;
    if (end > BYTES) end = BYTES;
    write_window(fd, at, end - at, s->piece);
    at = end;
    if (size < LARGEST) size *= 2;
  }
}

int main(int argc, char** argv) {
  const char* folder = argc > 1 ? argv[1] : "/tmp";
  int trials = argc > 2 ? atoi(argv[2]) : 41;
  if (trials < 1 || trials > MAX_TRIALS) trials = 41;
  char path[4096];
  snprintf(path, sizeof path, "%s/write_shapes_%d.dat", folder, (int)getpid());
  contiguous = malloc(BYTES);
  rows[0] = malloc(BYTES / 2);
  rows[1] = malloc(BYTES / 2);
  if (contiguous == NULL || rows[0] == NULL || rows[1] == NULL) return 1;
  memset(contiguous, 1, BYTES);
  memset(rows[0], 2, BYTES / 2);
  memset(rows[1], 3, BYTES / 2);
  static double ms[SHAPES][MAX_TRIALS];
  for (int k = 0; k < trials; ++k) {
    for (size_t i = 0; i < SHAPES; ++i) {
      const size_t s = (i + (size_t)k) % SHAPES;
      unlink(path);
      const int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
      if (fd < 0) {
        perror(path);
        return 1;
      }
      const double start = cpu_ms();
      write_shape(fd, &shapes[s]);
      ms[s][k] = cpu_ms() - start;
      close(fd);
    }
  }
  unlink(path);
  double one = 0;
  printf("16 MiB into a fresh file, thread CPU ms, medians of %d trials\n", trials);
  for (size_t s = 0; s < SHAPES; ++s) {
    qsort(ms[s], (size_t)trials, sizeof(double), by_value);
    const double median = ms[s][trials / 2];
    if (s == 0) one = median;
    printf("%-30s %6.2f ms (min %5.2f)  %.2f x one write\n", shapes[s].name, median, ms[s][0],
           median / one);
  }
  for (size_t s = 1; s < SHAPES; ++s) {
    printf("RATIO write_shapes_%s one_write/shape %.2f\n", shapes[s].name, one / ms[s][trials / 2]);
  }
  return 0;
}
