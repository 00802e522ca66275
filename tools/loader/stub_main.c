/* The executable part of a privatized program: weftcc adds the rank image to a copy of it. */
#include <stddef.h>
#include <stdlib.h>

#include "weft_loader.h"

/* Tells weftrun, before it runs anything, that this is a weft program. */
__attribute__((used, section(".weft_program"))) static const char weft_program[] = "privatized";

/* exit rather than a return: the C library would call its own exit, which does not know of the
 * threads that may be ending the process at the same moment (include/weft/process_end.h). */
int main(int argc, char** argv, char** envp) {
  exit(weft_loader_main(argc, argv, envp, NULL));
}
