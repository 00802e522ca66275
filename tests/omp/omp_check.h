/* Result checks of the OpenMP conformance programs: a failed check prints what was expected and
 * what came, and the program exits 1 at the end (omp_check_status). Safe from any thread. */
#ifndef WEFT_OMP_CHECK_H
#define WEFT_OMP_CHECK_H

#include <stdio.h>

static int omp_check_failures;

static void check_equal(long got, long expected, const char* what, int line) {
  if (got == expected) return;
  __atomic_add_fetch(&omp_check_failures, 1, __ATOMIC_RELAXED);
  fprintf(stderr, "line %d: %s: got %ld, expected %ld\n", line, what, got, expected);
}

static int omp_check_status(const char* program) {
  const int failures = __atomic_load_n(&omp_check_failures, __ATOMIC_RELAXED);
  if (failures != 0) fprintf(stderr, "%s: %d failed checks\n", program, failures);
  return failures != 0;
}

#endif
