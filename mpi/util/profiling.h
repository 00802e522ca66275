// The profiling interface (MPI-3.1 14.2): every MPI function is defined under its PMPI_ name and
// its MPI_ name is a weak alias of it, so a tool library that defines MPI_Send itself (and calls
// PMPI_Send) takes the user's calls while weft keeps working.
//
//   extern "C" int PMPI_Send(...) { ... }
//   WEFT_MPI_ALIAS(MPI_Send);
//
// A macro because the alias is made from the function's name by token pasting and the attribute
// takes the target's name as a string; nothing else can spell that.
#pragma once

#include "mpi.h"

#define WEFT_MPI_ALIAS(name) \
  extern "C" decltype(P##name) name __attribute__((weak, alias("P" #name)))
