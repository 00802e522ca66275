# The CI subset (tests/sanitizers/README.md), sourced by scripts/sanitize and scripts/test: the
# test programs to build and the ctest names to run where a build does not run the whole suite
# (the sanitizer builds, and the clang build of scripts/test without --full): the scheduler, its
# wake rule and its blocking primitives, exit functions against fork, the I/O manager, MPI
# point-to-point and collectives in one process and spread over two processes (p2.), privatized
# programs launched by weftrun in one process and with -p 2 (the loader's per-rank copies), and
# OpenMP programs alone and under weftrun (in the clang build, also those built by clang: LLVM's
# __kmpc_* ABI).
# shellcheck shell=bash disable=SC2034
ci_subset_targets=(weft_toolchain thread_test sync_test wake_rule_test exit_functions_test
  blocking_calls_test p2p_test collective_test pair_ring_test fan_ring_test privatize_globals.build
  rank_threads.build omp_parallel.build omp_tasks.build omp_worksharing.build)
ci_subset_tests='^(Thread\.|ThreadDeathTest\.|Sync\.|WakeRule\.|ExitFunctions\.|Cores/PingPong\.|Modes/BlockingCalls\.|BlockingCallsOutsideWeft\.|(p2\.)?(P2p\.|Jobs/Ring\.|Shapes/Collective\.)|Shapes/(PairRing|FanRing)\.|privatize_globals\.|rank_threads\.|omp\.(parallel|tasks|worksharing)\.)'
