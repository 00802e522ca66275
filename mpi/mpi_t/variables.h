// What the tools interface (MPI-4.1 15) shows: control variables, one per key of weft's typed
// configuration (include/weft/config.h), performance variables over weft's own counters, the
// enumerations of enumerated keys, and categories, one per configuration section.
//
// The tables are built once per process, on the first MPI_T_init_thread, from the configuration
// keys; their indices never change afterwards (MPI_T_category_changed always reports 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpi.h"

namespace weft::mpi::tools {

struct Enumeration {
  std::string name;
  std::vector<std::string> items;  // item i has value i
};

struct ControlVariable {
  std::string name;  // the configuration key
  std::string desc;
  int verbosity = MPI_T_VERBOSITY_USER_BASIC;
  MPI_Datatype datatype = MPI_INT;
  int enumeration = -1;  // index into enumerations(), for enumerated keys
  int scope = MPI_T_SCOPE_CONSTANT;
  int category = -1;
};

// The value of a performance variable, per calling rank or per process.
enum class Counter {
  messages_sent,
  messages_arrived,
  unexpected_length,
  mpi_parks,
  switches,
  steals,
  sleeps,
  remote_wakes,
};

struct PerformanceVariable {
  std::string name;
  std::string desc;
  int verbosity = MPI_T_VERBOSITY_USER_BASIC;
  int var_class = MPI_T_PVAR_CLASS_COUNTER;
  Counter counter = Counter::messages_sent;
  int category = -1;
};

struct Category {
  std::string name;
  std::string desc;
  std::vector<int> cvars;
  std::vector<int> pvars;
};

struct Tables {
  std::vector<ControlVariable> cvars;
  std::vector<PerformanceVariable> pvars;
  std::vector<Enumeration> enumerations;
  std::vector<Category> categories;
};

const Tables& tables();

// A control variable's value as MPI_T_cvar_read writes it: `count` elements of its datatype.
int cvar_count(int index);
void read_cvar(int index, void* buffer);
// MPI_SUCCESS, MPI_T_ERR_CVAR_SET_NEVER for a key fixed once the job runs, or
// MPI_T_ERR_INVALID when the value is out of the key's range.
int write_cvar(int index, const void* buffer);

// A performance variable's current value, as seen by the calling rank.
std::uint64_t read_counter(Counter counter);

}  // namespace weft::mpi::tools
