/* A GCC nested function that uses its parent's variables, passed by address inside a parallel
 * region (omp.nested_function.*): GCC writes a trampoline on the thread's stack and runs it there,
 * and marks the program as needing an executable stack (PT_GNU_STACK with PF_X). Every weft
 * thread's stack must then be executable, as glibc makes pthread stacks. */
#include <omp.h>

#include "omp_check.h"

static int apply(int (*fn)(int), int value) {
  return fn(value);
}

int main(void) {
  int failures = 0;
#pragma omp parallel reduction(+ : failures)
  {
    const int offset = 100 * omp_get_thread_num();
    int add_offset(int value) {
      return value + offset;
    }
    if (apply(add_offset, 7) != 7 + offset) failures++;
  }
  check_equal(failures, 0, "threads whose nested function returned a wrong value", __LINE__);
  return omp_check_status("omp_nested_function");
}
