/* tmpnam(NULL) returns the rank's own buffer; the names themselves come from glibc. */
#define _GNU_SOURCE
#include <stdio.h>

static char name[L_tmpnam];

__attribute__((weak)) char* tmpnam(char buffer[L_tmpnam]) {
  return tmpnam_r(buffer != NULL ? buffer : name);
}
