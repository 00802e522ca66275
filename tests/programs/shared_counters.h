/* Counters that live in an ordinary shared library, outside every rank image: one copy per
 * process, shared by all ranks (the documented limit of privatization). Tests use them to count
 * across ranks what each rank's copy does (constructors, destructors). */
#ifndef WEFT_TEST_SHARED_COUNTERS_H
#define WEFT_TEST_SHARED_COUNTERS_H

#ifdef __cplusplus
extern "C" {
#endif

enum { WEFT_TEST_COUNTERS = 8 };

/* Adds `amount` to counter `which` and returns its new value. */
int weft_test_counter_add(int which, int amount);
int weft_test_counter_read(int which);
/* When the library is unloaded (at process exit, after every rank's finalizers ran), counter
 * `which` must read `value`; otherwise a message names both and the process exits with 1. */
void weft_test_counter_expect_at_unload(int which, int value);

/* Calls exit(status) from this library, outside the rank images (as the Fortran run-time's STOP
 * does). */
void weft_test_exit(int status) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
