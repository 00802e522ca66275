#!/usr/bin/env bash
# Every function include/mpi.h declares is defined in libweft under its MPI_ and PMPI_ names.
# Usage: api_symbols_check.sh GENERATE_PY MPI_H LIBWEFT
set -euo pipefail
generate=$1 mpi_h=$2 lib=$3
declared=$(python3 "$generate" names "$mpi_h")
defined=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
missing=$(comm -23 <(echo "$declared" | sort -u) <(echo "$defined"))
if [[ -n $missing ]]; then
  echo "declared in mpi.h but not defined in $lib:"
  echo "$missing"
  exit 1
fi
echo "all $(echo "$declared" | wc -l) functions of mpi.h are defined in $(basename "$lib")"
