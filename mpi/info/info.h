// Info objects (MPI_Info): ordered (key, value) string pairs, hints to other calls. An Info is a
// local object of the rank that made it. MPI_INFO_ENV describes the running job; it is read-only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mpi.h"

struct weft_mpi_info {
  // In the order the keys were first set: MPI_Info_get_nthkey numbers them so.
  std::vector<std::pair<std::string, std::string>> entries;
};
