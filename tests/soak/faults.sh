#!/usr/bin/env bash
# Faults a job of several processes must end on with a clear message and a non-zero status, no
# process left behind and nothing left in /dev/shm or $TMPDIR (docs/testing.md, "Faults"). One
# check per ctest (tests/soak/CMakeLists.txt):
#
#   faults.sh <check> <bin dir> <soak dir> <work dir>
#
# As root every check runs in a private mount namespace whose /dev/shm is an empty tmpfs of its
# own, so that what the job leaves there is seen apart from the rest of the machine. A check that
# cannot run here prints "SKIPPED: <reason>" (ctest's skip expression) and exits 0. Nothing is
# timed: waits are bounded, and a check passes or fails on statuses, messages and what is left.
set -uo pipefail

check=$1
bin=$2
soak_dir=$3
work=$4/$1

if [[ $(id -u) -eq 0 && -z ${FAULTS_PRIVATE_SHM:-} ]]; then
  namespaces=(--mount --propagation private)
  # tcp_cut cuts every TCP connection of its own network namespace, where only the job has any.
  [[ $check == tcp_cut ]] && namespaces+=(--net)
  exec unshare "${namespaces[@]}" env FAULTS_PRIVATE_SHM=1 bash "$0" "$@"
fi
if [[ -n ${FAULTS_PRIVATE_SHM:-} ]]; then
  mount -t tmpfs -o size=4g weft-faults-shm /dev/shm || { echo "cannot mount a private /dev/shm" >&2; exit 1; }
fi

here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/tmp"
cd "$work" || exit 1
export TMPDIR=$work/tmp

fail() {
  echo "FAILED $check: $*" >&2
  for file in out err; do
    [[ -s $work/$file ]] && { echo "--- std$file:"; tail -n 30 "$work/$file"; } >&2
  done
  exit 1
}
skip() {
  echo "SKIPPED: $*"
  exit 0
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

# waits up to <seconds> for <file> to match <regex>.
wait_for() {
  local file=$1 regex=$2 seconds=$3
  for ((i = 0; i < seconds * 10; ++i)); do
    grep -Eq -- "$regex" "$file" 2> /dev/null && return 0
    sleep 0.1
  done
  return 1
}

expect_in() { # <file> <extended regex>
  grep -Eq -- "$2" "$1" || fail "std$1 lacks /$2/"
}
expect_not_in() { # <file> <extended regex>
  ! grep -Eq -- "$2" "$1" || fail "std$1 has /$2/: $(grep -Em1 -- "$2" "$1")"
}

# The processes of the job (weftrun's children, in the order started: process 0 first), saved in
# `job_pids` while it runs (those seen, if it ends first).
job_pids=()
note_job() {
  local weftrun=$1 want=$2
  for ((i = 0; i < 300; ++i)); do
    mapfile -t job_pids < <(pgrep -P "$weftrun" | sort -n)
    ((${#job_pids[@]} >= want)) && return 0
    # A job refused at its start may end first.
    kill -0 "$weftrun" 2> /dev/null || return 0
    sleep 0.1
  done
  fail "weftrun did not start $want processes"
}

# After the job: no process of it left (none of its process groups has a member), nothing in
# $TMPDIR, nothing in the private /dev/shm.
expect_clean() {
  for pid in "${job_pids[@]}"; do
    if pgrep -g "$pid" > /dev/null; then
      fail "process group $pid of the job still has processes: $(pgrep -g "$pid" | tr '\n' ' ')"
    fi
  done
  local left
  left=$(ls -A "$TMPDIR")
  [[ -z $left ]] || fail "left in \$TMPDIR: $left"
  if [[ -n ${FAULTS_PRIVATE_SHM:-} ]]; then
    left=$(ls -A /dev/shm)
    [[ -z $left ]] || fail "left in /dev/shm: $left"
  fi
}

# Starts a soak of 8 ranks in 2 processes in the background (stdout in out, stderr in err) and
# waits until its traffic runs; `weftrun` is its pid. `soak` is the program weftrun runs.
soak=("$soak_dir/soak")
start_soak() {
  env --default-signal=INT "$bin/weftrun" -n 8 -p 2 "$@" "${soak[@]}" --messages 0 --seconds 600 \
    --max-size 262144 > out 2> err &
  weftrun=$!
  note_job "$weftrun" 2
  ((${#job_pids[@]} == 2)) || fail "the job ended before it started"
  wait_for out "^soak: seed" 120 || fail "the soak did not start"
  sleep 1
}

# Waits for weftrun (pid `weftrun`) to end by itself and checks its status.
expect_end() {
  local want=$1
  wait_gone "$weftrun" 60 || { kill -KILL "$weftrun"; fail "the job did not end"; }
  wait "$weftrun"
  local got=$?
  ((got == want)) || fail "weftrun exited with $got; expected $want"
}

case $check in
  kill)
    # A process killed in the middle of the traffic: the job ends with 128+9, naming it. The
    # survivor sees its peer go (a failed copy from its memory, or its pidfd) and ends with one
    # line naming it: no crash, no UCX backtrace.
    start_soak
    kill -KILL "${job_pids[1]}"
    expect_end 137
    expect_in err "weftrun: process 1 \(ranks 4-7\) of '.*soak' was killed by signal 9"
    expect_in err "^weft: process 0 \(ranks 0-3\): lost process 1 \(ranks 4-7\): "
    expect_not_in err "backtrace|crashed with"
    expect_clean ;;
  kill_remote)
    # The same between machines, simulated: process 1 sees another boot id (other_boot.sh), so the
    # two make their endpoints as between machines, with UCP_ERR_HANDLING_MODE_PEER (over TCP):
    # UCX reports the failure, and the survivor's line gives UCX's reason.
    [[ -n ${FAULTS_PRIVATE_SHM:-} ]] || skip "needs root for a mount namespace of its own"
    soak=("$here/other_boot.sh" "$soak_dir/soak")
    start_soak
    kill -KILL "${job_pids[1]}"
    expect_end 137
    expect_in err "weftrun: process 1 \(ranks 4-7\) of '.*other_boot.sh' was killed by signal 9"
    expect_in err "^weft: process 0 \(ranks 0-3\): lost process 1 \(ranks 4-7\): UCX: "
    expect_not_in err "backtrace|crashed with"
    expect_clean ;;
  stop)
    # A process that stops answering (SIGSTOP): its peers wait on UCX for it forever, so weftrun
    # ends the job once it stayed stopped past --stopped-limit.
    start_soak --stopped-limit 2
    kill -STOP "${job_pids[1]}"
    expect_end $((128 + 19))
    expect_in err "weftrun: process 1 \(ranks 4-7\) of '.*soak' stayed stopped by signal 19"
    expect_clean ;;
  disk_full)
    # Standard output on a full file system: the lost output ends the job with a message instead of
    # a success. As root a 64 KiB tmpfs (ENOSPC); otherwise a file size limit, which kills with
    # SIGXFSZ, and weftrun names the signal.
    if [[ -n ${FAULTS_PRIVATE_SHM:-} ]]; then
      mkdir -p small
      mount -t tmpfs -o size=64k weft-faults-small small || fail "cannot mount a small tmpfs"
      "$bin/weftrun" -n 4 -p 2 "$soak_dir/fault_output" 2000 > small/out 2> err &
      weftrun=$!
      note_job "$weftrun" 2
      expect_end 1
      expect_in err "writing standard output failed: No space left on device"
      umount small
    else
      (ulimit -f 64 && exec "$bin/weftrun" -n 4 -p 2 "$soak_dir/fault_output" 2000 > out 2> err) &
      weftrun=$!
      note_job "$weftrun" 2
      expect_end $((128 + 25))
      expect_in err "killed by signal 25"
    fi
    expect_clean ;;
  memory)
    # Not enough address space for the ranks' stacks and copies while they start.
    (ulimit -v 600000 && exec "$bin/weftrun" -n 64 -p 2 "$soak_dir/soak" --messages 100 \
      > out 2> err) &
    weftrun=$!
    note_job "$weftrun" 2
    expect_end 1
    expect_in err "rank [0-9]+.*Cannot allocate memory"
    expect_clean ;;
  map_count)
    # vm.max_map_count too low for the ranks' copies: refused before anything is loaded. The limit
    # is not namespaced, so the check reads a lowered copy bound over it in its own mount
    # namespace rather than lowering the machine's.
    [[ -n ${FAULTS_PRIVATE_SHM:-} ]] || skip "needs root for a private mount namespace"
    echo 1200 > max_map_count
    mount --bind max_map_count /proc/sys/vm/max_map_count || skip "cannot bind over /proc/sys/vm/max_map_count"
    "$bin/weftrun" -n 64 -p 2 "$soak_dir/soak" --messages 100 > out 2> err &
    weftrun=$!
    note_job "$weftrun" 2
    expect_end 2
    umount /proc/sys/vm/max_map_count
    expect_in err "more than vm.max_map_count = 1200"
    expect_clean ;;
  tcp_cut)
    # Between nodes, simulated: UCX on TCP over the loopback of a network namespace of the test's
    # own; mid-job every established connection is reset (ss -K). The job must end naming the
    # failed transfer, not hang.
    [[ -n ${FAULTS_PRIVATE_SHM:-} ]] || skip "needs root for a network namespace of its own"
    command -v ss > /dev/null || skip "needs ss (iproute2)"
    ip link set lo up || fail "cannot bring up the namespace's loopback"
    export UCX_TLS=tcp,self
    start_soak
    ss -K -tn state established > /dev/null || skip "ss -K cannot close sockets (CONFIG_INET_DIAG_DESTROY)"
    expect_end 1
    expect_in err "^weft: .*(UCX .*failed: |was lost: UCX: )"
    expect_in err "^weftrun: process [01] \\(ranks [0-9]+-[0-9]+\\) of '.*soak' exited with status 1"
    expect_clean ;;
  *)
    fail "unknown check" ;;
esac
echo "PASSED $check"
