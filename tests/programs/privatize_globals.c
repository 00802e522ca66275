/* Privatized globals in C. Run as `privatize_globals private` (built by weftcc) or
 * `privatize_globals shared` (built with --no-privatize, run on one virtual processor). Every
 * rank changes its globals once, then all ranks compare what they read after a barrier:
 * - a global counter and a static in a function: 1 each when private, the number of ranks shared;
 * - an initialized global each rank adds its rank to: 42 + rank private, 42 + the sum shared;
 * - the global's address: distinct in every rank private, the same everywhere shared;
 * - a constructor function runs once per rank private, once per process shared, and so do the
 *   destructor functions (checked by the shared library when it is unloaded);
 * - a __thread variable: private, each copy has its own (1); shared, ranks of one kernel thread
 *   share it (the number of ranks on one virtual processor);
 * - a counter inside an external shared library is always shared: it reaches the number of ranks.
 * Exits 1 with a message naming the rank on any difference. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared_counters.h"

enum { EXTERNAL = 0, CONSTRUCTED = 1, DESTRUCTED = 2 };

int counter;
int initialized = 42;
__thread int per_thread;
static int constructed;

__attribute__((constructor)) static void construct(void) {
  ++constructed;
  weft_test_counter_add(CONSTRUCTED, 1);
}

__attribute__((destructor)) static void destruct(void) {
  weft_test_counter_add(DESTRUCTED, 1);
}

static int add_to_static(int amount) {
  static int calls;
  calls += amount;
  return calls;
}

static int failures;

static void expect(int rank, const char* what, long got, long expected) {
  if (got != expected) {
    fprintf(stderr, "rank %d: %s reads %ld; expected %ld\n", rank, what, got, expected);
    ++failures;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2 || (strcmp(argv[1], "private") != 0 && strcmp(argv[1], "shared") != 0)) {
    fprintf(stderr, "usage: privatize_globals private|shared\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int private_globals = strcmp(argv[1], "private") == 0;

  ++counter;
  add_to_static(1);
  initialized += rank;
  ++per_thread;
  weft_test_counter_add(EXTERNAL, 1);
  MPI_Barrier(MPI_COMM_WORLD);

  const long sum_of_ranks = (long)size * (size - 1) / 2;
  expect(rank, "the global counter", counter, private_globals ? 1 : size);
  expect(rank, "the static in a function", add_to_static(0), private_globals ? 1 : size);
  expect(rank, "the initialized global", initialized,
         private_globals ? 42 + rank : 42 + sum_of_ranks);
  expect(rank, "the constructor count of this copy", constructed, 1);
  expect(rank, "the constructor count of the process", weft_test_counter_read(CONSTRUCTED),
         private_globals ? size : 1);
  expect(rank, "the __thread variable", per_thread, private_globals ? 1 : size);
  expect(rank, "the external library's counter", weft_test_counter_read(EXTERNAL), size);

  uint64_t address = (uint64_t)(uintptr_t)&counter;
  uint64_t* addresses = malloc(sizeof *addresses * (size_t)size);
  MPI_Allgather(&address, 1, MPI_UINT64_T, addresses, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  int same = 0;
  for (int r = 0; r < size; ++r) same += addresses[r] == address;
  expect(rank, "the ranks whose global counter is at this rank's address", same,
         private_globals ? 1 : size);
  free(addresses);

  if (rank == 0) weft_test_counter_expect_at_unload(DESTRUCTED, private_globals ? size : 1);
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0)
    printf("privatize_globals %s: %d ranks agree\n", argv[1], size);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
