// Entry points of OpenMP features weft does not provide. GCC emits them for target offload, teams
// inside target regions and the pre-4.9 parallel ABI; each ends the program with a message naming
// the feature, rather than running it wrongly.
#include <string>

#include "weft/error.h"

namespace {

[[noreturn]] void unsupported(const char* entry, const char* feature) {
  weft::fatal(std::string(entry) + ": " + feature +
              " is not supported by weft's OpenMP runtime (omp_bridge); see docs/omp_bridge.md");
}

}  // namespace

// Arguments are left out: these functions read none, and on x86-64 a callee that ignores its
// register arguments is called correctly whatever they are.
extern "C" {

void GOMP_target_ext() {
  unsupported("GOMP_target_ext", "target offload (#pragma omp target)");
}
void GOMP_target_data_ext() {
  unsupported("GOMP_target_data_ext", "target offload (#pragma omp target data)");
}
void GOMP_target_end_data() {
  unsupported("GOMP_target_end_data", "target offload (#pragma omp target data)");
}
void GOMP_target_update_ext() {
  unsupported("GOMP_target_update_ext", "target offload (#pragma omp target update)");
}
void GOMP_target_enter_exit_data() {
  unsupported("GOMP_target_enter_exit_data", "target offload (#pragma omp target enter data)");
}
void GOMP_teams4() {
  unsupported("GOMP_teams4", "the teams construct inside a target region");
}
void GOMP_parallel_start() {
  unsupported("GOMP_parallel_start", "the pre-GCC 4.9 parallel ABI (recompile the object)");
}
void GOMP_parallel_end() {
  unsupported("GOMP_parallel_end", "the pre-GCC 4.9 parallel ABI (recompile the object)");
}

}  // extern "C"
