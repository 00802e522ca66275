/* An ordinary program, not built with weftcc: weftrun must refuse to run it. */
#include <stdio.h>

int main(void) {
  puts("plain program ran");
  return 0;
}
