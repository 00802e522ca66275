#!/usr/bin/env bash
# A job's program that runs process 1 as if on another machine, for faults.sh kill_remote (root):
# process 1 sees its own boot id, bound over /proc/sys/kernel/random/boot_id in a mount namespace
# of its own, so that the processes make their endpoints to each other as between machines.
#
#   weftrun -p 2 other_boot.sh <program> [args]
set -uo pipefail
program=$1
shift
if [[ ${WEFT_INTERNAL_BOOTSTRAP_PROCESS:-0} == 1 ]]; then
  exec unshare --mount --propagation private bash -c '
    echo 00000000-0000-4000-8000-000000000001 > other_boot_id
    mount --bind other_boot_id /proc/sys/kernel/random/boot_id || exit 99
    exec "$0" "$@"' "$program" "$@"
fi
exec "$program" "$@"
