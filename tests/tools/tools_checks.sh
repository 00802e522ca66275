#!/usr/bin/env bash
# Process-level checks of weftrun and weftcc, one per ctest (tests/tools/CMakeLists.txt):
#
#   tools_checks.sh <check> <bin dir> <programs dir> <work dir> <cmake> <generator>
#
# <programs dir> holds the programs of tests/programs. Waits are bounded and nothing is timed:
# each check passes or fails on exit statuses, messages and whether processes are gone.
set -uo pipefail

check=$1
bin=$2
programs=$3
work=$4/$1
cmake=$5
generator=$6
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

source "$(dirname "${BASH_SOURCE[0]}")/check_helpers.sh"

expect_in() { # <file> <extended regex>
  grep -Eq -- "$2" "$1" || fail "std$1 lacks /$2/"
}

# waits up to <seconds> for <pid> to end.
wait_gone() {
  local pid=$1 seconds=$2
  for ((i = 0; i < seconds * 10; ++i)); do
    kill -0 "$pid" 2> /dev/null || return 0
    sleep 0.1
  done
  return 1
}

# signal_check <signal> <program mode> <expected status>: weftrun of a hanging job gets the
# signal; weftrun must exit with the status and the program's process must be gone.
signal_check() {
  local signal=$1 mode=$2 want=$3
  # bash starts background commands with SIGINT ignored, which weftrun would respect. The job
  # is a deadlock on purpose: without deadlock.report=off weft would end it first (status 86).
  env --default-signal=INT "$bin/weftrun" -n 4 --set scheduler.vps=2 --set deadlock.report=off \
    "$programs/weftrun_exit_status" "$mode" > out 2> err &
  local weftrun=$!
  local child=
  for ((i = 0; i < 600; ++i)); do
    child=$(sed -n 's/^pid \([0-9]*\)$/\1/p' out)
    [[ -n $child ]] && break
    sleep 0.1
  done
  [[ -n $child ]] || { kill -KILL "$weftrun"; fail "the job did not start within 60 s"; }
  kill -"$signal" "$weftrun"
  wait_gone "$weftrun" 60 || { kill -KILL "$weftrun"; fail "weftrun still runs 60 s after SIG$signal"; }
  wait "$weftrun"
  local got=$?
  ((got == want)) || fail "weftrun exited with $got after SIG$signal; expected $want"
  kill -0 "$child" 2> /dev/null && fail "the program (pid $child) outlived weftrun"
  expect_in err "killed by signal"
}

case $check in
  exit_return)
    expect_run 3 "$bin/weftrun" -n 4 "$programs/weftrun_exit_status" return 2 3
    expect_run 0 "$bin/weftrun" -n 4 "$programs/weftrun_exit_status" return 2 0 ;;
  exit_call)
    # exit() in a rank ends that rank only; one that would end an MPI job of processes (a
    # non-zero status, or MPI still initialized) ends the job, naming the rank.
    expect_run 5 "$bin/weftrun" -n 4 "$programs/weftrun_exit_status" exit 2 5
    expect_in err "^weft: rank 2 exited with status 5"
    expect_run 1 "$bin/weftrun" -n 4 "$programs/weftrun_exit_status" exit 1 0
    expect_in err "^weft: rank 1 exited without calling MPI_Finalize"
    expect_run 6 "$bin/weftrun" -n 4 -p 2 "$programs/weftrun_exit_status" exit 3 6
    expect_in err "^weft: rank 3 exited with status 6" ;;
  exit_abort)
    expect_run 7 "$bin/weftrun" -np 4 "$programs/weftrun_exit_status" abort 1 7
    expect_in err "MPI_Abort.*rank 1.*7" ;;
  bad_option)
    expect_run 2 "$bin/weftrun" --bogus "$programs/weftrun_exit_status" return 0 0
    expect_in err "unknown option '--bogus'"
    expect_run 2 "$bin/weftrun" -n
    expect_in err "-n needs a value"
    expect_run 2 "$bin/weftrun" -n 0 "$programs/weftrun_exit_status" return 0 0
    expect_in err "-n '0' is not valid"
    expect_run 2 "$bin/weftrun" -n 2
    expect_in err "no program given"
    expect_run 2 "$bin/weftrun" -n 2 "$work/missing_program"
    expect_in err "cannot run program" ;;
  bad_set)
    expect_run 2 "$bin/weftrun" --set mpi.rank=2 "$programs/weftrun_exit_status" return 0 0
    expect_in err "unknown configuration key 'mpi.rank'.*weftrun"
    expect_run 2 "$bin/weftrun" --placement diagonal "$programs/weftrun_exit_status" return 0 0
    expect_in err "placement.tasks.*diagonal"
    expect_run 2 "$bin/weftrun" --progress sometimes "$programs/weftrun_exit_status" return 0 0
    expect_in err "placement.progress.*sometimes"
    expect_run 2 "$bin/weftrun" --config "$work/missing.toml" "$programs/weftrun_exit_status" \
      return 0 0
    expect_in err "missing.toml" ;;
  config_precedence)
    # A file value, overridden by the command line; the program sees the result.
    printf '[mpi]\nranks = 5\n' > job.toml
    expect_run 5 "$bin/weftrun" --config job.toml "$programs/weftrun_exit_status" return 4 5
    expect_run 0 "$bin/weftrun" --config job.toml -n 3 "$programs/weftrun_exit_status" return 4 5
    expect_run 6 env WEFT_MPI_RANKS=2 "$bin/weftrun" -n 3 "$programs/weftrun_exit_status" \
      return 2 6 ;;
  sigterm) signal_check TERM hang 143 ;;
  sigint) signal_check INT hang 130 ;;
  sigterm_ignored) signal_check TERM hang-ignoring-sigterm 137 ;;
  not_weft_elf)
    expect_run 2 "$bin/weftrun" -n 2 "$programs/weftrun_plain_program"
    expect_in err "not built with weftcc"
    grep -q "plain program ran" out && fail "weftrun ran a program not built with weftcc"
    true ;;
  not_weft_script)
    printf '#!/bin/sh\nexec "%s"\n' "$programs/weftrun_plain_program" > plain.sh
    chmod +x plain.sh
    expect_run 2 "$bin/weftrun" -n 2 ./plain.sh
    expect_in err "without starting weft ranks" ;;
  load_failure)
    # A rank image whose shared library disappeared: the loader names the rank and the reason.
    echo 'int gone(void) { return 0; }' > gone.c
    printf 'int gone(void);\nint main(void) { return gone(); }\n' > uses_gone.c
    expect_run 0 "$bin/weftcc" -shared -o libgone.so gone.c
    expect_run 0 "$bin/weftcc" -o uses_gone uses_gone.c -L. -lgone -Wl,-rpath,"$work"
    expect_run 0 "$bin/weftrun" -n 2 ./uses_gone
    rm libgone.so
    expect_run 2 "$bin/weftrun" -n 2 ./uses_gone
    expect_in err "rank 0: cannot load its copy of the program: libgone.so" ;;
  one_rank)
    # Without weftrun a program runs as one rank; the environment configures it too.
    expect_run 0 "$programs/privatize_globals" private
    expect_in out "1 ranks agree"
    expect_run 0 env WEFT_MPI_RANKS=3 "$programs/privatize_globals" private
    expect_in out "3 ranks agree" ;;
  help)
    expect_run 0 "$bin/weftrun" --help
    expect_in out "usage: weftrun"
    expect_in out "mpi.ranks"
    expect_in out "placement.cores_per_task" ;;
  show)
    echo 'int main(void) { return 0; }' > tiny.c
    expect_run 0 "$bin/weftcc" -show -O2 -o tiny tiny.c
    expect_in out "-shared .*-Wl,-Bsymbolic"
    expect_in out "-lweft"
    expect_in out "objcopy --add-section .weft_image=tiny.weft-image.so"
    [[ -e tiny ]] && fail "-show built the program"
    expect_run 0 "$bin/mpicxx" -show -c tiny.c
    expect_in out " -c tiny.c .*-fPIC"
    expect_run 0 "$bin/weftcc" --no-privatize -show -o tiny tiny.c
    expect_in out "-Wl,--wrap=main"
    expect_run 0 "$bin/mpicc" -O2 -o tiny tiny.c
    expect_run 0 ./tiny
    expect_run 2 "$bin/weftcc" -static -o tiny tiny.c
    expect_in err "-static"
    echo 'int helper(void) { return 1; }' > no_main.c
    expect_run 1 "$bin/weftcc" -o no_main no_main.c
    expect_in err "main" ;;
  showme)
    # Open MPI's and MPICH's ways of asking the wrapper for its command line and flags.
    printf '%s\n' '#include <mpi.h>' '#include <stdio.h>' 'int main(int argc, char **argv) {' \
      '  int rank, size;' '  MPI_Init(&argc, &argv);' '  MPI_Comm_rank(MPI_COMM_WORLD, &rank);' \
      '  MPI_Comm_size(MPI_COMM_WORLD, &size);' \
      '  printf("hello from rank %d of %d\n", rank, size);' '  MPI_Finalize();' '  return 0;' \
      '}' > hello.c
    for option in -show -showme; do
      expect_run 0 "$bin/mpicc" "$option"
      expect_in out "^[^ ]*cc -I[^ ]*/include .*-fPIC .*-lweft_loader -lweft$"
      expect_run 0 "$bin/mpicc" "$option" -O2 -o hello hello.c
      expect_in out "-O2 hello.c .*libweft_rank_libc.a -o hello.weft-image.so .*-shared"
      expect_in out "objcopy --add-section .weft_image=hello.weft-image.so"
    done
    [[ -e hello ]] && fail "-showme built the program"
    expect_run 0 "$bin/mpicc" -compile_info -c hello.c
    expect_in out "cc -I[^ ]*/include -c hello.c -fPIC"
    expect_run 0 "$bin/mpicc" -link_info -o hello hello.o
    expect_in out "hello.o .*libweft_rank_libc.a -o hello.weft-image.so .*-lweft"
    expect_run 0 "$bin/mpicxx" -showme:command
    expect_in out "(\+\+|clang)"
    expect_run 0 "$bin/mpicc" -showme:incdirs
    [[ -f $(cat out)/mpi.h ]] || fail "-showme:incdirs: no mpi.h in $(cat out)"
    expect_run 0 "$bin/mpicc" -showme:libdirs
    [[ -f $(cat out)/libweft.so ]] || fail "-showme:libdirs: no libweft.so in $(cat out)"
    expect_run 0 "$bin/mpicc" -showme:libs
    expect_in out "^weft_loader weft$"
    expect_run 0 "$bin/mpicc" -showme:version
    expect_in out "weft [0-9]"
    expect_run 2 "$bin/mpicc" -showme:nonsense
    expect_in err "showme:nonsense"
    # What a build system does with the parts: the plain compiler and the wrapper's flags.
    read -ra compiler < <("$bin/mpicc" -showme:command)
    read -ra compile_flags < <("$bin/mpicc" -showme:compile)
    read -ra link_flags < <("$bin/mpicc" -showme:link)
    expect_run 0 "${compiler[@]}" "${compile_flags[@]}" -c hello.c -o hello.o
    expect_run 0 "${compiler[@]}" hello.o "${link_flags[@]}" -o hello
    expect_run 0 "$bin/weftrun" -n 3 --set scheduler.vps=2 ./hello
    expect_in out "hello from rank 2 of 3" ;;
  launcher_names)
    # mpiexec and mpirun are weftrun, with the options of Open MPI's mpirun that scripts pass.
    for launcher in mpiexec mpirun; do
      [[ $(readlink -f "$bin/$launcher") == $(readlink -f "$bin/weftrun") ]] ||
        fail "$bin/$launcher is not weftrun"
    done
    expect_run 0 "$bin/mpiexec" -n 3 --set scheduler.vps=2 "$programs/privatize_globals" private
    expect_in out "3 ranks agree"
    expect_run 0 "$bin/mpirun" -np 2 --set scheduler.vps=2 "$programs/privatize_globals" private
    expect_in out "2 ranks agree"
    expect_run 0 "$bin/mpirun" --oversubscribe --allow-run-as-root -np 5 --set scheduler.vps=2 \
      "$programs/privatize_globals" private
    expect_in out "5 ranks agree"
    expect_run 0 "$bin/mpirun" -oversubscribe -np 2 --set scheduler.vps=2 \
      "$programs/privatize_globals" private
    expect_run 2 "$bin/mpirun" --oversubscribe=yes -np 2 "$programs/privatize_globals" private
    expect_in err "oversubscribe"
    expect_run 0 "$bin/mpiexec" --help
    expect_in out "mpiexec and mpirun" ;;
  cmake_project)
    # weftcc and weftcxx as the compilers of a CMake project: its compiler checks, a check that
    # runs a test program, a shared library and a program using it.
    expect_run 0 "$cmake" -S "$here/cmake_project" -B build -G "$generator" \
      -DCMAKE_C_COMPILER="$bin/weftcc" -DCMAKE_CXX_COMPILER="$bin/weftcxx"
    expect_run 0 "$cmake" --build build
    expect_run 0 build/hello
    expect_in out "hello from rank 0 of 1 \(C\+\+ says 0\)"
    expect_run 0 "$bin/weftrun" -n 3 build/hello
    expect_in out "hello from rank 2 of 3" ;;
  *) fail "unknown check" ;;
esac
echo "PASSED $check"
