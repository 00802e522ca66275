/* exit() for the whole weftcc-built process, in front of the C library's: libweft_loader.so is
 * the program's first library, so calls to exit from outside the rank images reach this one (an
 * external shared library's, such as the Fortran run-time's STOP, and a --no-privatize
 * program's). Made by a rank's own thread, it ends that rank only, as the rank image's own exit
 * does (tools/rank_libc/exit.c, docs/privatization.md "A rank's exit"); anywhere else it is the
 * C library's exit. The C library's own calls to exit do not come here. */
#include <stdlib.h>

/* libweft (mpi/init/rank_exit.cpp). */
extern void weft_rank_exit(int status, int run_handlers) __attribute__((noreturn));

void exit(int status) {
  weft_rank_exit(status, 1);
}
