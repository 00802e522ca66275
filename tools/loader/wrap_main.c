/* Linked into a --no-privatize program with -Wl,--wrap=main: the C runtime then starts
 * __wrap_main, which runs the program's own main (__real_main) in every rank. */
#include <stdlib.h>

#include "weft_loader.h"

/* Tells weftrun, before it runs anything, that this is a weft program. */
__attribute__((used, section(".weft_program"))) static const char weft_program[] = "shared";

int __real_main(int argc, char** argv, char** envp);
int __wrap_main(int argc, char** argv, char** envp);

int __wrap_main(int argc, char** argv, char** envp) {
  /* exit rather than a return: the C library would call its own exit, which does not know of the
   * threads that may be ending the process at the same moment (include/weft/process_end.h). */
  exit(weft_loader_main(argc, argv, envp, __real_main));
}
