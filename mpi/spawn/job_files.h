// What the dynamic-process calls leave on the host for a job of several processes, removed by
// its process 0 once every process has ended its ranks.
#pragma once

#include <string>

namespace weft::mpi {

// The file of the job's published service names (mpi/spawn/name_service.cpp).
std::string name_table_path(const std::string& job_key);

void remove_job_files(const std::string& job_key);

}  // namespace weft::mpi
