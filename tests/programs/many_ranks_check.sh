#!/usr/bin/env bash
# many_ranks_check.sh <weftrun> <many_ranks program> <ranks>: runs the program with 2 ranks and
# with <ranks> ranks in one process and checks that the larger job has at most one more memory
# mapping per additional rank (copies of the program share arenas, stacks share slabs, guard
# pages live inside their slab where the kernel has guard regions). <ranks> is above the ~16 000
# that 4 mappings per rank allowed under the default vm.max_map_count.
set -euo pipefail
weftrun=$1
program=$2
ranks=$3

# Before Linux 6.13 (no MADV_GUARD_INSTALL) a guard page is a mapping of its own, two per stack:
# the mappings checked here are then the copies' and the slabs', with canary stacks.
settings=()
IFS=.- read -r major minor _ <<< "$(uname -r)"
if ((major < 6 || (major == 6 && minor < 13))); then
  echo "kernel $(uname -r) has no guard regions: running with stack.guard=false"
  settings=(--set stack.guard=false)
fi

mappings() {
  local out
  out=$("$weftrun" "${settings[@]}" -n "$1" "$program")
  echo "$out" >&2
  sed -n 's/^ranks [0-9]* mappings \([0-9]*\)$/\1/p' <<< "$out"
}

small=$(mappings 2)
large=$(mappings "$ranks")
if [[ -z $small || -z $large ]]; then
  echo "FAILED: no mapping count printed" >&2
  exit 1
fi
added=$((large - small))
echo "2 ranks: $small mappings; $ranks ranks: $large mappings; $added more for $((ranks - 2)) more ranks"
if ((added > ranks - 2)); then
  echo "FAILED: more than one mapping per rank" >&2
  exit 1
fi
