#include "shared_counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int counters[WEFT_TEST_COUNTERS];
static int expected[WEFT_TEST_COUNTERS];
static int checked[WEFT_TEST_COUNTERS];

int weft_test_counter_add(int which, int amount) {
  return __atomic_add_fetch(&counters[which], amount, __ATOMIC_SEQ_CST);
}

int weft_test_counter_read(int which) {
  return __atomic_load_n(&counters[which], __ATOMIC_SEQ_CST);
}

void weft_test_counter_expect_at_unload(int which, int value) {
  expected[which] = value;
  checked[which] = 1;
}

__attribute__((destructor)) static void check_at_unload(void) {
  for (int i = 0; i < WEFT_TEST_COUNTERS; ++i) {
    if (checked[i] && counters[i] != expected[i]) {
      fprintf(stderr, "shared counter %d reads %d at unload; expected %d\n", i, counters[i],
              expected[i]);
      fflush(NULL);
      _exit(1);
    }
  }
}

void weft_test_exit(int status) {
  exit(status);
}
