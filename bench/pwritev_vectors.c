// What a pwritev costs the kernel per vector, against the collective buffers' alternative: the
// same 16 MiB, in 4 MiB windows whose pieces of S bytes come from 4 ranks' blocks in turn (never
// adjacent in memory), written (a) by pwritev straight from the pieces, IOV_MAX vectors at a
// time, (b) by copying the pieces into a 4 MiB buffer and one pwrite of it, (c) by the copy alone,
// (d) by one pwrite of contiguous memory, as the disk's own write. Alternated in one run, each
// timed in the CPU time of the thread (user and kernel), which the machine's load changes less
// than the wall clock. The file's pages are in the page cache after the first write, so every
// method overwrites cached pages. Picks kDirectVectorBytes (mpi/io/collective_buffer.h):
//   RATIO pwritev_<S>B pwritev/copy+pwrite   below 1: the direct write costs less CPU in all
//   RATIO pwritev_<S>B pwritev/pwrite        the direct write against the disk's own write
// Usage: pwritev_vectors [file (default: /tmp/weft_pwritev_vectors_<pid>)] [repetitions (15)]
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { kWindow = 4 << 20, kTotal = 16 << 20, kRanks = 4, kMaxReps = 101 };

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// One pass of method m over the 16 MiB; 0 when every call wrote all its bytes.
static int pass(int m, int fd, const char* source, char* buffer, struct iovec* iov, size_t n,
                size_t piece) {
  for (off_t at = 0; at < kTotal; at += kWindow) {
    if (m == 0) {
      for (size_t i = 0; i < n; i += IOV_MAX) {
        const size_t c = n - i < IOV_MAX ? n - i : IOV_MAX;
        if (pwritev(fd, iov + i, (int)c, at + (off_t)(i * piece)) != (ssize_t)(c * piece)) return 1;
      }
    } else if (m == 1 || m == 2) {
      for (size_t i = 0; i < n; ++i) memcpy(buffer + i * piece, iov[i].iov_base, piece);
      if (m == 1 && pwrite(fd, buffer, kWindow, at) != kWindow) return 1;
    } else if (pwrite(fd, source + at, kWindow, at) != kWindow) {
      return 1;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  char fallback[64];
  snprintf(fallback, sizeof fallback, "/tmp/weft_pwritev_vectors_%d", (int)getpid());
  const char* path = argc > 1 ? argv[1] : fallback;
  int reps = argc > 2 ? atoi(argv[2]) : 15;
  if (reps < 1 || reps > kMaxReps) reps = 15;
  const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  char* source = aligned_alloc(4096, kTotal);
  char* buffer = aligned_alloc(4096, kWindow);
  struct iovec* iov = malloc(sizeof(struct iovec) * (kWindow / 64));
  if (fd < 0 || source == NULL || buffer == NULL || iov == NULL) {
    perror("pwritev_vectors");
    return 1;
  }
  memset(source, 1, kTotal);
  memset(buffer, 2, kWindow);
  if (pwrite(fd, source, kTotal, 0) != kTotal) return 1;
  static const size_t sizes[] = {128, 256, 384, 512, 1024, 4096, 65536};
  enum { kSizes = sizeof sizes / sizeof *sizes };
  double ratios[kSizes][2];
  printf("%7s %12s %16s %10s %12s   (CPU ms per 16 MiB, medians of %d)\n", "piece", "pwritev",
         "copy+pwrite", "copy", "pwrite", reps);
  for (size_t k = 0; k < kSizes; ++k) {
    const size_t piece = sizes[k], n = kWindow / piece;
    for (size_t i = 0; i < n; ++i) {
      iov[i].iov_base = source + (i % kRanks) * (kTotal / kRanks) + (i / kRanks) * piece;
      iov[i].iov_len = piece;
    }
    double t[4][kMaxReps], median[4];
    for (int r = 0; r < reps; ++r) {
      for (int m = 0; m < 4; ++m) {
        const double start = cpu_seconds();
        if (pass(m, fd, source, buffer, iov, n, piece) != 0) {
          perror("pwritev_vectors: write");
          return 1;
        }
        t[m][r] = cpu_seconds() - start;
      }
    }
    for (int m = 0; m < 4; ++m) {
      qsort(t[m], (size_t)reps, sizeof(double), by_value);
      median[m] = t[m][reps / 2];
    }
    printf("%7zu %12.2f %16.2f %10.2f %12.2f\n", piece, median[0] * 1e3, median[1] * 1e3,
           median[2] * 1e3, median[3] * 1e3);
    ratios[k][0] = median[0] / median[1];
    ratios[k][1] = median[0] / median[3];
  }
  for (size_t k = 0; k < kSizes; ++k) {
    printf("RATIO pwritev_%zuB pwritev/copy+pwrite %.2f\n", sizes[k], ratios[k][0]);
    printf("RATIO pwritev_%zuB pwritev/pwrite %.2f\n", sizes[k], ratios[k][1]);
  }
  close(fd);
  unlink(path);
  return 0;
}
