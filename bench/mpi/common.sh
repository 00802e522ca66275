# What bench/mpi/run and bench/mpi/nbc_run share, sourced by both (at the top level, so that the
# variables below are global): finding Open MPI and weft's tools, compiling the same sources with
# both, Open MPI's launch flags, failures and medians over rounds.
#
# The sourcing script sets: here (bench/mpi), build_dir (weft's build), out (where the builds
# go), work (a scratch folder), programs (names of bench/mpi/<name>.c), build_only (non-empty for
# --build-only) and status=0.
# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # the variables are the sourcing script's, in both directions

# fail <what>: reports a failure now (before the summary) and again at the end of the summary.
fail() {
  [[ -n ${summary:-} ]] || echo "FAILED $*"
  echo "FAILED $*" >> "$work/failures"
  status=1
}

# Open MPI's tools. Its own names first: build/bin/mpicc on PATH would be weft's.
openmpi_cc=$(command -v mpicc.openmpi || true)
openmpi_run=$(command -v mpirun.openmpi || true)
if [[ -z $openmpi_cc ]] && mpicc --showme:version 2>&1 | grep -q 'Open MPI'; then
  openmpi_cc=$(command -v mpicc)
fi
if [[ -z $openmpi_run ]] && mpirun --version 2>&1 | grep -q 'Open MPI'; then
  openmpi_run=$(command -v mpirun)
fi
weftcc=$build_dir/bin/weftcc
weftrun=$build_dir/bin/weftrun

# build <impl> <compiler>: compiles every program into $out/<impl>; marks the impl usable.
declare -A usable
build() {
  local impl=$1 compiler=$2 program
  mkdir -p "$out/$impl"
  usable[$impl]=1
  for program in "${programs[@]}"; do
    if ! "$compiler" -O2 -Wall -Wextra -Werror -o "$out/$impl/$program" "$here/$program.c" \
      > "$work/build.log" 2>&1; then
      fail "$impl build of $program.c: $(head -c 600 "$work/build.log" | tr '\n' ' ')"
      rm -f "$out/$impl/$program"
    fi
  done
}

# build_both: the Open MPI build, then weft's; a missing Open MPI only fails a measuring run.
build_both() {
  if [[ -n $openmpi_cc && -n $openmpi_run ]]; then
    build openmpi "$openmpi_cc"
  elif [[ -n $build_only ]]; then
    echo "note: no Open MPI found; only weft's build is checked"
  else
    fail "openmpi: mpicc.openmpi or mpirun.openmpi not found (install openmpi-bin libopenmpi-dev)"
  fi
  if [[ -x $weftcc && -x $weftrun ]]; then
    build weft "$weftcc"
  else
    fail "weft: $weftcc or $weftrun missing (build the weft_toolchain target)"
  fi
}

# choose_openmpi_flags <program> [args]: sets openmpi_flags. Open MPI's shared-memory transport
# reads the peer's memory with CMA (process_vm_readv), which a container may forbid; fall back to
# copy-in/copy-out then, rather than fail. The program, run at 2 ranks, is the probe.
choose_openmpi_flags() {
  # shellcheck disable=SC2054 # self,vader is one argument
  openmpi_flags=(--oversubscribe --allow-run-as-root --mca btl self,vader)
  if [[ -n ${usable[openmpi]:-} && -x $1 ]] &&
    ! timeout 60 "$openmpi_run" "${openmpi_flags[@]}" -np 2 "$@" > /dev/null 2>&1; then
    openmpi_flags+=(--mca btl_vader_single_copy_mechanism none)
    echo "note: Open MPI runs without CMA single copy (btl_vader_single_copy_mechanism none)"
  fi
}

# why_in <log>: the end of a failed run's own words, on one line.
why_in() { grep -v '^RESULT' "$1" | tail -n 5 | tr '\n' ' ' | cut -c 1-400; }

# medians <file>: reads lines `<key fields...> <value> <unit>` (one per round) and prints
# `<key fields...> <median> <unit>` once per key, keys in the order they first appeared. A median,
# not a mean: one round hit by a burst of load elsewhere must not move the figure.
medians() {
  awk '
    { key = $1; for (i = 2; i <= NF - 2; ++i) key = key " " $i
      values[key, ++count[key]] = $(NF - 1); unit[key] = $NF
      if (!(key in seen)) { seen[key] = 1; order[++keys] = key } }
    END { for (k = 1; k <= keys; ++k) {
            key = order[k]; n = count[key]
            for (i = 1; i <= n; ++i) v[i] = values[key, i]
            for (i = 2; i <= n; ++i)
              for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            print key, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, unit[key] } }
  ' "$1"
}
