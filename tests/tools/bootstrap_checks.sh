#!/usr/bin/env bash
# Process-level checks of a job of several processes (weftrun -p, and Open MPI's mpirun for the
# PMIx path), one per ctest (tests/tools/CMakeLists.txt):
#
#   bootstrap_checks.sh <check> <bin dir> <bootstrap_exchange program> <work dir> <programs dir>
#
# <programs dir> holds the MPI programs of tests/programs.
# Waits are bounded and nothing is timed: each check passes or fails on exit statuses, messages,
# and whether processes and the socket directory are gone.
set -uo pipefail

check=$1
bin=$2
program=$3
work=$4/$1
programs=$5
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
# A private TMPDIR: weftrun's socket directory is created there, so that what is left is seen.
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
# A synthetic machine of 4 cores: the split of the cores is the same on every host.
machine=(--set "topology=synthetic:pack:1 core:4 pu:1")

# The processes the job printed: "process I pid P" and "process I child P".
printed_processes() {
  sed -n 's/^process [0-9]* \(pid\|child\) \([0-9]*\)$/\2/p' "$work/out" 2> /dev/null
}

fail() {
  echo "FAILED $check: $*" >&2
  for file in out err; do
    [[ -s $work/$file ]] && { echo "--- std$file:"; cat "$work/$file"; } >&2
  done
  # Nothing of a failed check outlives it.
  for pid in $(printed_processes); do kill -KILL "$pid" 2> /dev/null; done
  exit 1
}

# A job that does not end is killed after 120 s (its status is then 137).
expect_run() { # <status> <command...>
  local want=$1
  shift
  timeout -s KILL 120 "$@" > out 2> err
  local got=$?
  ((got == want)) || fail "'$*' exited with $got; expected $want"
}

expect_failure() { # <command...>: any non-zero status
  timeout -s KILL 120 "$@" > out 2> err
  local got=$?
  ((got != 0)) || fail "'$*' exited with 0; expected a failure"
}

expect_in() { # <file> <extended regex>
  grep -Eq -- "$2" "$1" || fail "std$1 lacks /$2/"
}

# True while <pid> runs; a zombie has ended (its parent, a process of the job, is gone).
running() {
  [[ -e /proc/$1 ]] && ! grep -q '^State:.*Z' "/proc/$1/status" 2> /dev/null
}

# The processes the job printed ("process I pid P") must all be gone, and so must their children.
# A child's SIGKILL may take effect just after weftrun returns: it gets up to 10 s.
expect_processes_gone() {
  local pid
  for pid in $(printed_processes); do
    for ((i = 0; i < 100; ++i)); do
      running "$pid" || break
      sleep 0.1
    done
    running "$pid" && fail "process $pid outlived weftrun"
  done
}

expect_nothing_left() {
  expect_processes_gone
  [[ -z $(ls -A "$TMPDIR") ]] || fail "weftrun left $(ls -A "$TMPDIR") in TMPDIR"
}

# waits up to 60 s for <count> lines matching <regex> in out.
wait_for_lines() {
  local count=$1 regex=$2
  for ((i = 0; i < 600; ++i)); do
    (($(grep -Ec -- "$regex" out) >= count)) && return 0
    sleep 0.1
  done
  return 1
}

# weftrun_in_background <weftrun arguments...>: sets $weftrun.
weftrun_in_background() {
  # bash starts background commands with SIGINT ignored, which weftrun would respect.
  env --default-signal=INT "$bin/weftrun" "$@" > out 2> err &
  weftrun=$!
}

finish_background() { # <expected status>
  local want=$1
  for ((i = 0; i < 600; ++i)); do
    kill -0 "$weftrun" 2> /dev/null || break
    sleep 0.1
  done
  kill -0 "$weftrun" 2> /dev/null && { kill -KILL "$weftrun"; fail "weftrun still runs after 60 s"; }
  wait "$weftrun"
  local got=$?
  ((got == want)) || fail "weftrun exited with $got; expected $want"
}

case $check in
  exchange_p2)
    expect_run 0 "$bin/weftrun" -n 2 -p 2 "${machine[@]}" "$program" exchange
    expect_in out "^process 0 of 2: ranks 0\+1 of 2 ok$"
    expect_in out "^process 1 of 2: ranks 1\+1 of 2 ok$"
    expect_in out "^cores 0-1$"
    expect_in out "^cores 2-3$"
    expect_nothing_left ;;
  exchange_p4)
    expect_run 0 "$bin/weftrun" -n 6 --processes 4 "${machine[@]}" "$program" exchange
    expect_in out "^process 0 of 4: ranks 0\+2 of 6 ok$"
    expect_in out "^process 1 of 4: ranks 2\+2 of 6 ok$"
    expect_in out "^process 2 of 4: ranks 4\+1 of 6 ok$"
    expect_in out "^process 3 of 4: ranks 5\+1 of 6 ok$"
    for core in 0 1 2 3; do expect_in out "^cores $core$"; done
    expect_nothing_left
    # More processes than cores: they take the cores in turn.
    expect_run 0 "$bin/weftrun" -n 3 -p 3 --set "topology=synthetic:pack:1 core:2 pu:1" \
      "$program" exchange
    (($(grep -c '^cores 0$' out) == 2)) || fail "processes 0 and 2 should share core 0"
    expect_in out "^cores 1$"
    expect_nothing_left ;;
  ucx_environment)
    # weftrun gives the processes of -p UCX's CMA segment size (tools/weftrun.cpp, kUcxDefaults)
    # unless the user set it: the user's own value wins.
    expect_run 0 env -u UCX_CMA_SEG_SIZE "$bin/weftrun" -n 2 -p 2 "${machine[@]}" "$program" \
      exchange
    (($(grep -c '^UCX_CMA_SEG_SIZE 4m$' out) == 2)) ||
      fail "both processes should get UCX_CMA_SEG_SIZE=4m"
    expect_run 0 env UCX_CMA_SEG_SIZE=1m "$bin/weftrun" -n 2 -p 2 "${machine[@]}" "$program" \
      exchange
    (($(grep -c '^UCX_CMA_SEG_SIZE 1m$' out) == 2)) ||
      fail "the user's UCX_CMA_SEG_SIZE=1m should win"
    expect_nothing_left ;;
  exit_nonzero)
    expect_run 3 "$bin/weftrun" -n 4 -p 2 "${machine[@]}" "$program" exit-after-fence 1 3
    expect_in err "process 1 \(ranks 2-3\) of .* exited with status 3; the other processes were stopped"
    expect_nothing_left ;;
  killed)
    weftrun_in_background -n 3 -p 3 "${machine[@]}" "$program" hang-with-child
    wait_for_lines 3 "^process [0-9] waits$" || { kill -KILL "$weftrun"; fail "the job did not start"; }
    victim=$(sed -n 's/^process 1 pid \([0-9]*\)$/\1/p' out)
    kill -KILL "$victim"
    finish_background 137
    expect_in err "process 1 \(rank 1\) of .* was killed by signal 9"
    expect_nothing_left ;;
  lost_peer)
    # Process 0 reports that it lost process 1 and ends first; process 1 is killed later. weftrun
    # names the lost process, not the one that saw it go.
    expect_run 137 "$bin/weftrun" -n 2 -p 2 "${machine[@]}" "$program" lose-peer 1
    expect_in err "process 1 \(rank 1\) of .* was killed by signal 9"
    expect_nothing_left ;;
  sigterm)
    # weftrun's signal forwarding reaches every process.
    weftrun_in_background -n 2 -p 2 "${machine[@]}" "$program" hang
    wait_for_lines 2 "^process [0-9] waits$" || { kill -KILL "$weftrun"; fail "the job did not start"; }
    kill -TERM "$weftrun"
    finish_background 143
    expect_in err "killed by signal 15"
    expect_nothing_left ;;
  peer_left)
    # Process 1 ends (with status 0) before the fence: process 0 cannot complete it.
    expect_run 1 "$bin/weftrun" -n 2 -p 2 "${machine[@]}" "$program" leave-before-fence 1
    expect_in err "refused fence 1: process 1 left the exchange \(its connection closed\): the fence cannot complete"
    expect_in err "process 0 \(rank 0\) of .* exited with status 1"
    expect_nothing_left ;;
  wrong_token)
    expect_failure "$bin/weftrun" -n 2 -p 2 "${machine[@]}" "$program" wrong-token
    expect_in err "weftrun refused hello: wrong token"
    expect_nothing_left ;;
  unreachable)
    expect_run 1 env WEFT_INTERNAL_BOOTSTRAP_SOCKET="$work/no-such-dir/bootstrap.sock" \
      WEFT_INTERNAL_BOOTSTRAP_TOKEN=00 WEFT_INTERNAL_BOOTSTRAP_PROCESS=0 \
      WEFT_INTERNAL_BOOTSTRAP_PROCESSES=2 WEFT_MPI_RANKS=2 "$program" exchange
    expect_in err "cannot reach weftrun's socket '.*no-such-dir/bootstrap.sock'.*No such file"
    expect_run 1 env WEFT_INTERNAL_BOOTSTRAP_SOCKET="$work/x" WEFT_INTERNAL_BOOTSTRAP_TOKEN=00 \
      WEFT_INTERNAL_BOOTSTRAP_PROCESS=2 WEFT_INTERNAL_BOOTSTRAP_PROCESSES=2 WEFT_MPI_RANKS=2 \
      "$program" exchange
    expect_in err "WEFT_INTERNAL_BOOTSTRAP_PROCESS is '2'; expected an integer from 0 to 1"
    # PMIX_RANK without a PMIx server.
    expect_run 1 env PMIX_RANK=0 "$program" exchange
    expect_in err "bootstrap \(PMIx\): PMIx_Init failed: " ;;
  mpi_job)
    # -p 1 is the job of one process weftrun always ran: no exchange, no message of its own.
    expect_run 4 "$bin/weftrun" -n 2 -p 1 "$programs/weftrun_exit_status" return 1 4
    grep -q "^weftrun:" err && fail "weftrun -p 1 reported something of its own"
    # MPI_Abort in a job of two processes ends both, with its code.
    expect_run 7 "$bin/weftrun" -n 4 -p 2 "$programs/weftrun_exit_status" abort 1 7
    expect_in err "MPI_Abort called by rank 1 .*code 7"
    expect_in err "weftrun: process [01] \(ranks [0-3]-[0-3]\) of .* exited with status 7; the other processes were stopped"
    expect_nothing_left ;;
  bad_options)
    expect_run 0 "$bin/weftrun" --help
    expect_in out "^  -p P, --processes P  "
    expect_run 2 "$bin/weftrun" -n 2 -p 3 "$program" exchange
    expect_in err "-p 3 needs at least 3 ranks"
    expect_run 2 "$bin/weftrun" -n 2 -p 0 "$program" exchange
    expect_in err "-p '0' is not valid"
    expect_run 2 "$bin/weftrun" -n 4 -p 2 "${machine[@]}" --set scheduler.vps=3 "$program" exchange
    expect_in err "scheduler.vps = 3 but -p 2 leaves process 1 2 cores \(cpus 2-3\)" ;;
  mpi_ring)
    # examples/ring.c's messages cross processes through UCX, under weftrun -p and under mpirun.
    expect_run 0 "$bin/weftrun" -n 8 -p 2 "${machine[@]}" "$bin/ring"
    expect_in out "reads 84 \(expected 84\)$"
    expect_run 0 "$bin/weftrun" -n 13 -p 4 "${machine[@]}" "$bin/ring"
    expect_in out "reads 234 \(expected 234\)$"
    expect_nothing_left
    mpirun=$(command -v mpirun) || { echo "SKIPPED $check (mpirun part): mpirun is not installed"; exit 0; }
    expect_run 0 "$mpirun" -np 3 --allow-run-as-root --oversubscribe "$bin/ring"
    expect_in out "reads 9 \(expected 9\)$" ;;
  pmix)
    mpirun=$(command -v mpirun) || { echo "SKIPPED $check: mpirun is not installed"; exit 0; }
    expect_run 0 "$mpirun" -np 2 --allow-run-as-root --oversubscribe "$program" exchange
    expect_in out "^process 0 of 2: ranks 0\+1 of 2 ok$"
    expect_in out "^process 1 of 2: ranks 1\+1 of 2 ok$"
    # Each process holding mpi.ranks ranks.
    expect_run 0 "$mpirun" -np 2 --allow-run-as-root --oversubscribe -x WEFT_MPI_RANKS=3 \
      "$program" exchange
    expect_in out "^process 1 of 2: ranks 3\+3 of 6 ok$" ;;
  *) fail "unknown check" ;;
esac
echo "PASSED $check"
