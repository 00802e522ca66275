#!/usr/bin/env bash
# Process-level checks of the deadlock report and the stack dumps, one per ctest
# (tests/tools/CMakeLists.txt):
#
#   deadlock_checks.sh <check> <bin dir> <programs dir> <work dir>
#
# The programs are the cases of tests/programs/deadlock_cases.c. Nothing is timed: a check
# passes or fails on exit statuses and on what the report names; waits are bounded.
set -uo pipefail

check=$1
bin=$2
programs=$3
work=$4/$1
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
export TMPDIR=$work
cases=$programs/deadlock_cases
deadlock=86

source "$(dirname "${BASH_SOURCE[0]}")/check_helpers.sh"

expect_in() { # <file> <fixed string>
  grep -Fq -- "$2" "$1" || fail "$1 lacks '$2'"
}

# Waits up to <seconds> for <file> to hold <fixed string>.
wait_for_text() {
  local file=$1 text=$2 seconds=$3
  for ((i = 0; i < seconds * 10; ++i)); do
    grep -Fq -- "$text" "$file" 2> /dev/null && return 0
    sleep 0.1
  done
  fail "$file did not show '$text' within $seconds s"
}

run() { # <weftrun options...> <program> <case> [args]: two cores in all, as CI has
  if [[ " $* " == *" -p "* ]]; then
    "$bin/weftrun" "$@"
  else
    "$bin/weftrun" --set scheduler.vps=2 "$@"
  fi
}

# Runs a job (weftrun's arguments) that prints "ready" once its ranks wait, takes every thread's
# stack with weft-info stacks --pid into `stacks`, and expects the job to end with 0.
stacks_of_running_job() {
  run "$@" > out 2> err &
  local job=$!
  wait_for_text out ready 60
  sleep 0.5
  "$bin/weft-info" stacks --pid $job > stacks 2> stacks.err ||
    fail "weft-info stacks failed: $(cat stacks.err)"
  wait $job
  local status=$?
  ((status == 0)) || fail "the job ended with $status; expected 0"
}

case $check in
  recv_cycle | recv_cycle_p2)
    if [[ $check == recv_cycle ]]; then procs=(-n 4); else procs=(-n 2 -p 2); fi
    expect_run $deadlock run "${procs[@]}" "$cases" recv_cycle
    expect_in err "weft: deadlock: every rank waits in MPI"
    expect_in err "rank 0: blocked in MPI_Recv(source=1, tag=7, comm=MPI_COMM_WORLD) -> waits for rank 1"
    expect_in err "rank 1: blocked in MPI_Recv(source=0, tag=7, comm=MPI_COMM_WORLD) -> waits for rank 0"
    expect_in err "cycle: rank 0 -> rank 1 -> rank 0"
    expect_in err "unmatched sends: none"
    if [[ $check == recv_cycle ]]; then expect_in err "rank 2: ended"; fi
    ;;
  barrier_short | barrier_short_p2)
    procs=(-n 4)
    [[ $check == barrier_short_p2 ]] && procs+=(-p 2)
    expect_run $deadlock run "${procs[@]}" "$cases" barrier_short
    for r in 0 1 2; do
      expect_in err "rank $r: blocked in MPI_Barrier(comm=MPI_COMM_WORLD, collective #0) -> waits for rank 3"
    done
    expect_in err "rank 3: ended"
    expect_in err "missing partner: rank 0 waits in collective #0 for rank 3, which has ended without joining it"
    ;;
  barrier_pair)
    # Two ranks wait in the pair ring (mpi/coll/pair_ring.h), whose calls put their record on
    # the thread only when they park: the parked rank is still reported in its call.
    expect_run $deadlock run -n 2 "$cases" barrier_short
    expect_in err "rank 0: blocked in MPI_Barrier(comm=MPI_COMM_WORLD, collective #0) -> waits for rank 1"
    expect_in err "rank 1: ended"
    ;;
  any_source | any_source_p2)
    if [[ $check == any_source ]]; then procs=(-n 3); else procs=(-n 2 -p 2); fi
    expect_run $deadlock run "${procs[@]}" "$cases" any_source
    expect_in err "rank 0: blocked in MPI_Recv(source=MPI_ANY_SOURCE, tag=5, comm=MPI_COMM_WORLD)"
    expect_in err "missing partner: rank 0 receives from MPI_ANY_SOURCE (tag 5 on MPI_COMM_WORLD)"
    expect_in err "rank 1: ended"
    ;;
  unmatched)
    # Rank 1 sends tag 7 eagerly before its receive: the message waits in rank 0's queue.
    expect_run $deadlock run -n 2 "$cases" unmatched
    expect_in err "to rank 0 from rank 1: tag 8, 4 bytes, on MPI_COMM_WORLD"
    expect_in err "cycle: rank 0 -> rank 1 -> rank 0"
    ;;
  report_off)
    # No report: the job hangs until killed; a timeout then gives one, marked not proven.
    # weftrun itself in the background, not the run function: $! must be weftrun's pid, or the
    # kill below ends a subshell and leaves weftrun and its ranks behind.
    "$bin/weftrun" --set scheduler.vps=2 -n 2 --set deadlock.report=off "$cases" recv_cycle \
      > out 2> err &
    job=$!
    sleep 2
    kill -0 $job 2> /dev/null || fail "the job ended although deadlock.report=off"
    kill -TERM $job
    wait $job
    # (weftrun's own line names the program, deadlock_cases, when the job is killed.)
    grep -qE "weft: (possible )?deadlock" err && fail "a report although deadlock.report=off"
    expect_run $deadlock run -n 2 --set deadlock.report=off --set deadlock.timeout=1 "$cases" \
      recv_cycle
    expect_in err "weft: possible deadlock (NOT PROVEN: no rank thread of process 0 woke"
    expect_in err "rank 0: blocked in MPI_Recv(source=1, tag=7, comm=MPI_COMM_WORLD)"
    ;;
  live | live_p2)
    # A rank computes for seconds without a single call while every other waits in MPI.
    if [[ $check == live ]]; then procs=(-n 64); seconds=10; else procs=(-n 8 -p 2); seconds=4; fi
    expect_run 0 run "${procs[@]}" "$cases" live $seconds
    expect_in out "live job done"
    ;;
  sigquit)
    # SIGQUIT to weftrun: every thread's stack on stderr, and the job goes on.
    env --default-signal=QUIT "$bin/weftrun" -n 4 --set scheduler.vps=2 "$cases" parked 4 \
      > out 2> err &
    job=$!
    wait_for_text out ready 60
    sleep 0.5 # the ranks park in their receives
    kill -QUIT $job
    wait_for_text err "weft: stacks of process 0" 30
    wait $job
    status=$?
    ((status == 0)) || fail "the job ended with $status after SIGQUIT; expected 0"
    expect_in err "(mpi_task, rank 1) parked"
    expect_in err "waits in MPI_Recv(source=0, tag=3, comm=MPI_COMM_WORLD)"
    expect_in err "PMPI_Recv"
    ;;
  info_stacks | info_stacks_p2)
    procs=(-n 4)
    [[ $check == info_stacks_p2 ]] && procs+=(-p 2)
    stacks_of_running_job "${procs[@]}" "$cases" parked 6
    for r in 1 2 3; do expect_in stacks "(mpi_task, rank $r) parked"; done
    expect_in stacks "waits in MPI_Recv(source=0, tag=3, comm=MPI_COMM_WORLD)"
    expect_in stacks "PMPI_Recv"
    if [[ $check == info_stacks_p2 ]]; then
      expect_in stacks "weft: stacks of process 0"
      expect_in stacks "weft: stacks of process 1"
    fi
    ;;
  ibarrier_short_p2)
    # The exchange threads of a nonblocking collective between processes wait under the
    # collective's record: the hang is proven and explained as for a blocking one.
    expect_run $deadlock run -n 4 -p 2 "$cases" ibarrier_short
    expect_in err "weft: deadlock: every rank waits in MPI"
    for r in 0 1 2; do
      expect_in err "rank $r: blocked in MPI_Wait(1 request: [0] MPI_Ibarrier(comm=MPI_COMM_WORLD)); MPI_Ibarrier(comm=MPI_COMM_WORLD, collective #0) -> waits for rank 3"
    done
    expect_in err "missing partner: rank 0 waits in collective #0 for rank 3, which has ended without joining it"
    ;;
  win_lock)
    # A rank waiting for a window lock yields rather than parks: never proven, but named by
    # deadlock.timeout's report and by the stack dump.
    expect_run $deadlock run -n 2 --set deadlock.timeout=1 "$cases" win_lock 0
    expect_in err "weft: possible deadlock (NOT PROVEN"
    expect_in err "rank 0: blocked in MPI_Recv(source=1, tag=12, comm=MPI_COMM_WORLD) -> waits for rank 1"
    expect_in err "rank 1: blocked in MPI_Win_lock(target=1)"
    stacks_of_running_job -n 2 "$cases" win_lock 5
    expect_in stacks "waits in MPI_Win_lock(target=1)"
    ;;
  file_short)
    # A collective file access that one rank never joins: never proven (a file's waits are not
    # all MPI's), named by deadlock.timeout's report.
    expect_run $deadlock run -n 3 --set deadlock.timeout=1 "$cases" file_short "$work/file"
    expect_in err "weft: possible deadlock (NOT PROVEN"
    expect_in err "rank 0: blocked in MPI_File_write_at_all()"
    expect_in err "rank 1: blocked in MPI_File_write_at_all()"
    expect_in err "rank 2: ended"
    ;;
  accept)
    # The other side of a port may be another job: never proven, named by deadlock.timeout.
    expect_run $deadlock run -n 2 --set deadlock.timeout=1 "$cases" accept
    expect_in err "weft: possible deadlock (NOT PROVEN"
    expect_in err "rank 0: blocked in MPI_Comm_accept(root=0, comm=MPI_COMM_SELF)"
    expect_in err "rank 1: blocked in MPI_Recv(source=0, tag=13, comm=MPI_COMM_WORLD) -> waits for rank 0"
    ;;
  placement_pid | placement_pid_p2)
    # 8 ranks of 2 OpenMP threads parked; weft-info asks the job where every thread is placed.
    procs=(-n 8)
    [[ $check == placement_pid_p2 ]] && procs+=(-p 2)
    OMP_NUM_THREADS=2 run "${procs[@]}" "$cases" parked_omp 6 > out 2> err &
    job=$!
    wait_for_text out ready 60
    sleep 0.5
    "$bin/weft-info" placement --pid $job --svg placement.svg > placement 2> placement.err ||
      fail "weft-info placement --pid failed: $(cat placement.err)"
    cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/$job/status)
    wait $job
    status=$?
    ((status == 0)) || fail "the job ended with $status; expected 0"
    python3 - placement placement.svg "$cpus" "${#procs[@]}" << 'PY' || fail "see above"
import re, sys, xml.etree.ElementTree as ET
text, svg, cpus, several = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4] != "2"
allowed = set()
for part in cpus.split(","):
    a, _, b = part.partition("-")
    allowed.update(range(int(a), int(b or a) + 1))
threads = re.findall(r"^  thread (\d+) \((\w+)(?:, rank (\d+))?\): placed (.*)$", text, re.M)
ranks = {int(r): placed for _, kind, r, placed in threads if kind == "mpi_task"}
problems = []
if sorted(ranks) != list(range(8)):
    problems.append(f"ranks listed {sorted(ranks)}, expected 0-7")
for rank, placed in ranks.items():
    m = re.match(r"on core \d+ \(cpu (\d+)\), pinned; \w+, (?:last )?on core \d+ \(cpu (\d+)\)", placed)
    if not m or int(m.group(1)) not in allowed or int(m.group(2)) not in allowed:
        problems.append(f"rank {rank}: '{placed}' names no cpu of the job's cpuset {cpus}")
workers = {int(r) for _, kind, r, _ in threads if kind == "omp_worker"}
if workers != set(range(8)):
    problems.append(f"OpenMP workers of ranks {sorted(workers)}, expected one for each of 0-7")
if not any(kind == "progress" for _, kind, _, _ in threads):
    problems.append("no progress thread listed")
processes = re.findall(r"^weft: placement of process (\d+) ", text, re.M)
if processes != (["0", "1"] if several else ["0"]):
    problems.append(f"processes {processes}")
ns = "{http://www.w3.org/2000/svg}"
drawn = [g for g in ET.parse(svg).getroot().iter(ns + "g") if g.get("class") == "thread"]
if len(drawn) != len(threads):
    problems.append(f"{len(drawn)} thread elements in the SVG for {len(threads)} threads")
if sorted(int(g.get("data-task")) for g in drawn if g.get("data-kind") == "rank") != list(range(8)):
    problems.append("the SVG lacks a rank element per rank")
for p in problems: print("placement:", p)
sys.exit(1 if problems else 0)
PY
    ;;
  crash)
    expect_run 139 run -n 3 "$cases" crash
    expect_in err "crashed with SIGSEGV"
    expect_in err "other thread"
    expect_in err "rank 0"
    ;;
  *)
    fail "unknown check"
    ;;
esac
echo "PASSED $check"
