// Privatized globals in C++, built by weftcxx. Each rank's copy constructs its static objects
// once and destructs them once (counted in an external shared library, which checks the totals
// when it is unloaded); statics of inline functions and templates, which GCC would otherwise make
// process-wide (STB_GNU_UNIQUE), are per rank too; exceptions thrown inside a copy are caught
// there. Exits 1 with a message naming the rank on any difference.
#include <mpi.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "shared_counters.h"

namespace {

enum { kConstructed = 3, kDestructed = 4 };

int constructions = 0;

struct Tracked {
  Tracked() {
    ++constructions;
    weft_test_counter_add(kConstructed, 1);
  }
  ~Tracked() { weft_test_counter_add(kDestructed, 1); }
  std::vector<int> touched;
};

Tracked global_object;
std::string global_text = "rank";

Tracked& function_static() {
  static Tracked object;
  return object;
}

int failures = 0;

void expect(int rank, const char* what, long got, long expected) {
  if (got != expected) {
    std::fprintf(stderr, "rank %d: %s reads %ld; expected %ld\n", rank, what, got, expected);
    ++failures;
  }
}

}  // namespace

inline int& inline_static() {
  static int value = 0;
  return value;
}

template <class T>
struct Registry {
  static int entries;
};
template <class T>
int Registry<T>::entries = 0;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  function_static().touched.push_back(rank);
  global_object.touched.push_back(rank);
  global_text += " " + std::to_string(rank);
  ++inline_static();
  ++Registry<double>::entries;
  bool caught = false;
  try {
    throw std::runtime_error("thrown in rank " + std::to_string(rank));
  } catch (const std::runtime_error& error) {
    caught = std::string(error.what()) == "thrown in rank " + std::to_string(rank);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  expect(rank, "the constructions in this copy", constructions, 2);
  expect(rank, "the constructions in the process", weft_test_counter_read(kConstructed), 2L * size);
  expect(rank, "the global object's entries", static_cast<long>(global_object.touched.size()), 1);
  expect(rank, "the function static's entries", static_cast<long>(function_static().touched.size()),
         1);
  expect(rank, "the global string's length", static_cast<long>(global_text.size()),
         static_cast<long>(("rank " + std::to_string(rank)).size()));
  expect(rank, "the inline function's static", inline_static(), 1);
  expect(rank, "the template's static member", Registry<double>::entries, 1);
  expect(rank, "the exception caught", caught, 1);

  if (rank == 0) weft_test_counter_expect_at_unload(kDestructed, 2 * size);
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) std::printf("privatize_cxx: %d ranks agree\n", size);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
