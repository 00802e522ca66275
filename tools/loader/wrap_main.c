/* Linked into a --no-privatize program with -Wl,--wrap=main: the C runtime then starts
 * __wrap_main, which runs the program's own main (__real_main) in every rank. */
#include "weft_loader.h"

/* Tells weftrun, before it runs anything, that this is a weft program. */
__attribute__((used, section(".weft_program"))) static const char weft_program[] = "shared";

int __real_main(int argc, char** argv, char** envp);
int __wrap_main(int argc, char** argv, char** envp);

int __wrap_main(int argc, char** argv, char** envp) {
  return weft_loader_main(argc, argv, envp, __real_main);
}
