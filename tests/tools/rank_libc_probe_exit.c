/* The two functions of libweft that the rank C library's exit.c calls, for the probe, which the
 * test loads without libweft: the probe checks glibc's functions with per-rank state (getopt,
 * rand, strtok...), never a rank's exit, so an exit reaching here is the test's own bug. */
#include <stdio.h>
#include <stdlib.h>

void weft_rank_exit(int status, int run_handlers) {
  (void)run_handlers;
  fprintf(stderr, "rank_libc probe: exit(%d) called: the probe has no rank to end\n", status);
  abort();
}

int weft_rank_register_exit_runner(void (*runner)(void*), void* dso) {
  (void)runner;
  (void)dso;
  return 0;
}
