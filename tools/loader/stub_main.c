/* The executable part of a privatized program: weftcc adds the rank image to a copy of it. */
#include <stddef.h>

#include "weft_loader.h"

/* Tells weftrun, before it runs anything, that this is a weft program. */
__attribute__((used, section(".weft_program"))) static const char weft_program[] = "privatized";

int main(int argc, char** argv, char** envp) {
  return weft_loader_main(argc, argv, envp, NULL);
}
