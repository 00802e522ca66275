/* The pipes through which the two processes of a UCX floor program (ucx_floor.c,
 * ucx_rma_floor.c) swap worker addresses and keys before they measure: whole writes and reads,
 * the program named when the other side is gone. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void pipe_write_all(const char* program, int fd, const void* data, size_t length) {
  for (size_t done = 0; done < length;) {
    const ssize_t n = write(fd, (const char*)data + done, length - done);
    if (n <= 0) {
      fprintf(stderr, "%s: write to the other process: ", program);
      perror(NULL);
      exit(1);
    }
    done += (size_t)n;
  }
}

static void pipe_read_all(const char* program, int fd, void* data, size_t length) {
  for (size_t done = 0; done < length;) {
    const ssize_t n = read(fd, (char*)data + done, length - done);
    if (n <= 0) {
      fprintf(stderr, "%s: the other process went away during the exchange\n", program);
      exit(1);
    }
    done += (size_t)n;
  }
}
