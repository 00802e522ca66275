#!/usr/bin/env bash
# Checks of weftrun --trace, weft-info trace-summary and weft-info placement --svg, one per ctest
# (tests/tools/CMakeLists.txt):
#
#   trace_checks.sh <check> <bin dir> <work dir> <test programs dir>
#
# The job is examples/hybrid.c (bin/hybrid): MPI ranks with OpenMP teams whose threads send to the
# next rank, and a Reduce; for otf2_comms, tests/programs/trace_comms.c, messages on every kind
# of communicator. Nothing is timed: the files must parse, nest and hold what was run.
set -uo pipefail

check=$1
bin=$2
work=$3/$1
programs=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
export OMP_NUM_THREADS=2

source "$(dirname "${BASH_SOURCE[0]}")/check_helpers.sh"

validate() { # <python mode and arguments...>
  python3 "$here/trace_check.py" "$@" > check.out 2>&1 || { cat check.out >&2; fail "$*"; }
}

summary() { # <trace file>
  expect_run 0 "$bin/weft-info" trace-summary "$1" --svg timeline.svg
  cp out summary.txt
  validate summary summary.txt
  validate timeline timeline.svg
}

needs_otf2() {
  command -v otf2-print > /dev/null || { echo "SKIPPED: otf2-print missing (otf2-tools)"; exit 0; }
  if "$bin/weftrun" --trace probe.otf2 -n 1 /bin/true 2>&1 | grep -q "without OTF2"; then
    echo "SKIPPED: this weft was built without OTF2 (libotf2-trace-dev)"
    exit 0
  fi
}

# otf2-print must read the archive and list what was recorded on every location, with the MPI
# point-to-point records of hybrid's ring of 4 ranks (trace_check.py messages).
otf2_validate() { # <archive> <locations at least>
  otf2-print "$1" > print.txt 2> print.err || { cat print.err >&2; fail "otf2-print $1 failed"; }
  grep -q "^ENTER" print.txt || fail "otf2-print lists no ENTER"
  grep -q "^LEAVE" print.txt || fail "otf2-print lists no LEAVE"
  local enters leaves
  enters=$(grep -c "^ENTER" print.txt)
  leaves=$(grep -c "^LEAVE" print.txt)
  ((enters == leaves)) || fail "$enters ENTER but $leaves LEAVE"
  grep -q '"rank 0"' print.txt || fail "no region of rank 0"
  grep -q '"MPI_Reduce"' print.txt || fail "no MPI_Reduce region"
  grep -q '"parallel region"' print.txt || fail "no OpenMP parallel region"
  validate messages print.txt 4 "$OMP_NUM_THREADS"
  otf2-print -G "$1" > defs.txt 2>&1 || fail "otf2-print -G $1 failed"
  grep -q '"MPI_COMM_WORLD"' defs.txt || fail "no MPI_COMM_WORLD communicator defined"
  local locations
  locations=$(grep -c "^LOCATION " defs.txt)
  ((locations >= $2)) || fail "$locations locations; expected at least $2"
}

case $check in
  json)
    expect_run 0 "$bin/weftrun" -n 4 -c 2 --set scheduler.vps=2 --trace t.json "$bin/hybrid"
    grep -q "expected 500000500000" out || fail "the job's result is wrong"
    validate json t.json 1 thread mpi omp rank MPI_Reduce MPI_Sendrecv flow:message flow:wake \
      in-mpi:message
    summary t.json
    ;;
  json_p2)
    expect_run 0 "$bin/weftrun" -n 4 -p 2 --trace t.json "$bin/hybrid"
    [[ ! -e t.json.parts ]] || fail "the parts' folder is left behind"
    validate json t.json 2 thread mpi omp rank MPI_Reduce flow:message
    summary t.json
    ;;
  pingpong)
    # 2 ranks on 2 virtual processors: each message's send begins before the receive that took
    # it ends, however the receive's end was timed (trace_check.py pingpong).
    expect_run 0 "$bin/weftrun" -n 2 --set scheduler.vps=2 --trace t.json "$programs/trace_pingpong" \
      3000
    grep -q "No Errors" out || fail "trace_pingpong did not end with No Errors"
    validate json t.json 1 thread mpi rank flow:message in-mpi:message
    validate pingpong t.json 3000
    ;;
  events)
    # trace.events=mpi: MPI calls only, no thread slices, OpenMP regions or flows.
    expect_run 0 "$bin/weftrun" -n 2 --set trace.events=mpi --trace t.json "$bin/hybrid"
    validate json t.json 1 mpi
    if grep -q '"cat":"omp"\|"cat":"thread"\|"ph":"s"' t.json; then
      fail "trace.events=mpi recorded more than MPI calls"
    fi
    ;;
  otf2)
    needs_otf2
    expect_run 0 "$bin/weftrun" -n 4 -c 2 --set scheduler.vps=2 --trace t.otf2 "$bin/hybrid"
    otf2_validate t.otf2 2
    summary t.otf2
    ;;
  otf2_p2)
    needs_otf2
    expect_run 0 "$bin/weftrun" -n 4 -p 2 --trace t.otf2 "$bin/hybrid"
    otf2_validate t.otf2 2
    grep -q "process 1" defs.txt || fail "no location group of process 1"
    summary t.otf2
    ;;
  otf2_comms | otf2_comms_p2)
    # Every communicator a message names is defined with its group: each record's peer, a rank
    # of the communicator, is the world rank its tag names (trace_check.py comms).
    needs_otf2
    options=(-p 1 --set scheduler.vps=2)
    [[ $check == *_p2 ]] && options=(-p 2)
    expect_run 0 "$bin/weftrun" -n 4 "${options[@]}" --trace t.otf2 "$programs/trace_comms"
    grep -q "No Errors" out || fail "trace_comms did not end with No Errors"
    otf2-print t.otf2 > print.txt 2> print.err || { cat print.err >&2; fail "otf2-print failed"; }
    otf2-print -G t.otf2 > defs.txt 2>&1 || fail "otf2-print -G failed"
    validate comms print.txt defs.txt 4
    ;;
  clock_monotonic)
    # trace.clock=monotonic: every event through the slow path, clock_gettime's times.
    expect_run 0 "$bin/weftrun" -n 4 -c 2 --set scheduler.vps=2 --set trace.clock=monotonic \
      --trace t.json "$bin/hybrid"
    validate json t.json 1 thread mpi omp rank MPI_Reduce flow:message flow:wake in-mpi:message
    summary t.json
    ;;
  bad_file)
    expect_run 2 "$bin/weftrun" -n 2 --trace t.txt "$bin/hybrid"
    grep -q "trace.file 't.txt' names no format" err || fail "no message naming the trace file"
    expect_run 2 "$bin/weftrun" -n 2 --set trace.events=mpi,nothing --trace t.json "$bin/hybrid"
    grep -q "trace.events" err || fail "no message naming trace.events"
    expect_run 2 "$bin/weft-info" trace-summary missing.json
    grep -q "missing.json" err || fail "no message naming the missing trace"
    ;;
  svg)
    # 4 ranks of 2 cores (a worker each) with a progress thread each, on two NUMA nodes of two
    # packages: 4 + 4 + 4 thread elements.
    expect_run 0 "$bin/weft-info" placement --tasks 4 --cores-per-task 2 --progress numa \
      --topology "synthetic:pack:2 [numa] core:8 pu:1" --svg p.svg
    validate svg p.svg 12
    grep -q 'class="package"' p.svg || fail "no package drawn"
    expect_run 0 "$bin/weft-info" placement --tasks 3 --progress none \
      --topology "synthetic:pack:1 [numa] core:4 pu:1" --svg q.svg
    validate svg q.svg 3
    ;;
  *)
    fail "unknown check"
    ;;
esac
echo "PASSED $check"
