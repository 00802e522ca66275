/* strtok with its position per rank: strtok_r with the saved pointer in the rank's copy. Like
 * glibc's, it is not meant for several threads of one rank at once. */
#define _GNU_SOURCE
#include <string.h>

static char* position;

__attribute__((weak)) char* strtok(char* string, const char* delimiters) {
  return strtok_r(string, delimiters, &position);
}
