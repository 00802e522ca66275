// The Info calls (MPI-3.1 9). They touch no rank state and work before MPI_Init too; their errors
// go to MPI_COMM_WORLD's handler, as errors tied to no communicator do.
#include "info/info.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "errhan/error.h"
#include "init/world.h"
#include "util/profiling.h"

weft_mpi_info weft_mpi_info_env;

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// MPI-3.1 10.5.5's keys that mean something here, computed when read since they describe the
// running job.
Entries environment() {
  Entries entries;
  entries.emplace_back("command", program_invocation_name);
  const weft::mpi::World* world = weft::mpi::world();
  entries.emplace_back("maxprocs", std::to_string(world != nullptr ? world->size() : 1));
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  entries.emplace_back("host", host);
  char directory[4096] = {};
  if (::getcwd(directory, sizeof directory) != nullptr) entries.emplace_back("wdir", directory);
  entries.emplace_back("thread_level", "MPI_THREAD_MULTIPLE");
  return entries;
}

// The entries of `info`; those of MPI_INFO_ENV are made in `scratch`.
const Entries& entries_of(MPI_Info info, Entries& scratch) {
  if (info != MPI_INFO_ENV) return info->entries;
  scratch = environment();
  return scratch;
}

int fail(std::string_view function, int error_class, const std::string& detail) {
  return weft::mpi::raise(MPI_COMM_WORLD, function, error_class, detail);
}

int check_info(std::string_view function, MPI_Info info, bool modifies) {
  if (info == MPI_INFO_NULL) {
    return fail(function, MPI_ERR_INFO, "info = MPI_INFO_NULL, expected an info object");
  }
  if (modifies && info == MPI_INFO_ENV) {
    return fail(function, MPI_ERR_INFO,
                "info = MPI_INFO_ENV, which is read-only; expected one made by MPI_Info_create "
                "or MPI_Info_dup");
  }
  return MPI_SUCCESS;
}

int check_out(std::string_view function, std::string_view argument, const void* out) {
  if (out != nullptr) return MPI_SUCCESS;
  return fail(function, MPI_ERR_ARG,
              std::string(argument) + " = NULL, expected where to store the result");
}

// Keys are 1..MPI_MAX_INFO_KEY-1 characters, so that any key fits, with its terminating null, in
// the MPI_MAX_INFO_KEY characters a program gives MPI_Info_get_nthkey.
int check_key(std::string_view function, const char* key) {
  if (key == nullptr) return fail(function, MPI_ERR_INFO_KEY, "key = NULL, expected a string");
  const std::size_t length = strnlen(key, MPI_MAX_INFO_KEY);
  if (length > 0 && length < MPI_MAX_INFO_KEY) return MPI_SUCCESS;
  return fail(function, MPI_ERR_INFO_KEY,
              length == 0 ? std::string("key is empty, expected 1..") +
                                std::to_string(MPI_MAX_INFO_KEY - 1) + " characters"
                          : "key has " + std::to_string(std::strlen(key)) +
                                " characters, expected at most " +
                                std::to_string(MPI_MAX_INFO_KEY - 1) + " (MPI_MAX_INFO_KEY - 1)");
}

template <class Container>
auto find(Container& entries, std::string_view key) {
  return std::find_if(entries.begin(), entries.end(),
                      [key](const auto& entry) { return entry.first == key; });
}

}  // namespace

extern "C" int PMPI_Info_create(MPI_Info* info) {
  if (int rc = check_out("MPI_Info_create", "info", info); rc != MPI_SUCCESS) return rc;
  *info = new weft_mpi_info;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_create);

extern "C" int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  constexpr std::string_view kFunction = "MPI_Info_set";
  if (int rc = check_info(kFunction, info, true); rc != MPI_SUCCESS) return rc;
  if (int rc = check_key(kFunction, key); rc != MPI_SUCCESS) return rc;
  if (value == nullptr) {
    return fail(kFunction, MPI_ERR_INFO_VALUE, "value = NULL, expected a string");
  }
  const std::size_t length = strnlen(value, MPI_MAX_INFO_VAL + 1);
  if (length > MPI_MAX_INFO_VAL) {
    return fail(kFunction, MPI_ERR_INFO_VALUE,
                "value has " + std::to_string(std::strlen(value)) +
                    " characters, expected at most " + std::to_string(MPI_MAX_INFO_VAL) +
                    " (MPI_MAX_INFO_VAL)");
  }
  auto& entries = info->entries;
  if (const auto it = find(entries, key); it != entries.end()) {
    it->second.assign(value, length);
  } else {
    entries.emplace_back(key, std::string(value, length));
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_set);

// valuelen excludes the terminating null: at most valuelen characters are stored, then a null.
extern "C" int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  constexpr std::string_view kFunction = "MPI_Info_get";
  if (int rc = check_info(kFunction, info, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_key(kFunction, key); rc != MPI_SUCCESS) return rc;
  if (valuelen < 0) {
    return fail(kFunction, MPI_ERR_ARG,
                "valuelen = " + std::to_string(valuelen) + ", expected >= 0");
  }
  if (int rc = check_out(kFunction, "value", value); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(kFunction, "flag", flag); rc != MPI_SUCCESS) return rc;
  Entries scratch;
  const Entries& entries = entries_of(info, scratch);
  const auto it = find(entries, key);
  *flag = it != entries.end();
  if (*flag) {
    const std::size_t n = std::min(it->second.size(), static_cast<std::size_t>(valuelen));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_get);

extern "C" int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  constexpr std::string_view kFunction = "MPI_Info_get_valuelen";
  if (int rc = check_info(kFunction, info, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_key(kFunction, key); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(kFunction, "valuelen", valuelen); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(kFunction, "flag", flag); rc != MPI_SUCCESS) return rc;
  Entries scratch;
  const Entries& entries = entries_of(info, scratch);
  const auto it = find(entries, key);
  *flag = it != entries.end();
  if (*flag) *valuelen = static_cast<int>(it->second.size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_get_valuelen);

extern "C" int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  if (int rc = check_info("MPI_Info_get_nkeys", info, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out("MPI_Info_get_nkeys", "nkeys", nkeys); rc != MPI_SUCCESS) return rc;
  Entries scratch;
  *nkeys = static_cast<int>(entries_of(info, scratch).size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_get_nkeys);

extern "C" int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  constexpr std::string_view kFunction = "MPI_Info_get_nthkey";
  if (int rc = check_info(kFunction, info, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(kFunction, "key", key); rc != MPI_SUCCESS) return rc;
  Entries scratch;
  const Entries& entries = entries_of(info, scratch);
  if (n < 0 || n >= static_cast<int>(entries.size())) {
    return fail(kFunction, MPI_ERR_ARG,
                "n = " + std::to_string(n) + ", expected 0.." +
                    std::to_string(static_cast<int>(entries.size()) - 1) + " (the info has " +
                    std::to_string(entries.size()) + " keys)");
  }
  const std::string& found = entries[n].first;
  std::memcpy(key, found.c_str(), found.size() + 1);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_get_nthkey);

extern "C" int PMPI_Info_delete(MPI_Info info, const char* key) {
  constexpr std::string_view kFunction = "MPI_Info_delete";
  if (int rc = check_info(kFunction, info, true); rc != MPI_SUCCESS) return rc;
  if (int rc = check_key(kFunction, key); rc != MPI_SUCCESS) return rc;
  const auto it = find(info->entries, key);
  if (it == info->entries.end()) {
    return fail(kFunction, MPI_ERR_INFO_NOKEY,
                "key = \"" + std::string(key) + "\" is not set, expected a key of the info");
  }
  info->entries.erase(it);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_delete);

extern "C" int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  if (int rc = check_info("MPI_Info_dup", info, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out("MPI_Info_dup", "newinfo", newinfo); rc != MPI_SUCCESS) return rc;
  Entries scratch;
  *newinfo = new weft_mpi_info{entries_of(info, scratch)};
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_dup);

extern "C" int PMPI_Info_free(MPI_Info* info) {
  if (int rc = check_out("MPI_Info_free", "info", info); rc != MPI_SUCCESS) return rc;
  if (int rc = check_info("MPI_Info_free", *info, true); rc != MPI_SUCCESS) return rc;
  delete *info;
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_free);

// MPI-4.0: *buflen is the buffer's size on input (the value may be NULL when it is 0) and the
// value's size with its terminating null on output; the value is cut to fit, always terminated.
extern "C" int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value,
                                    int* flag) {
  constexpr std::string_view kFunction = "MPI_Info_get_string";
  if (int rc = check_info(kFunction, info, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_key(kFunction, key); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(kFunction, "buflen", buflen); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(kFunction, "flag", flag); rc != MPI_SUCCESS) return rc;
  if (*buflen < 0) {
    return fail(kFunction, MPI_ERR_ARG, "*buflen = " + std::to_string(*buflen) + ", expected >= 0");
  }
  if (*buflen > 0) {
    if (int rc = check_out(kFunction, "value", value); rc != MPI_SUCCESS) return rc;
  }
  Entries scratch;
  const Entries& entries = entries_of(info, scratch);
  const auto it = find(entries, key);
  *flag = it != entries.end();
  if (!*flag) return MPI_SUCCESS;
  if (*buflen > 0) {
    const std::size_t n = std::min(it->second.size(), static_cast<std::size_t>(*buflen - 1));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }
  *buflen = static_cast<int>(it->second.size()) + 1;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_get_string);

// MPI-4.0: a new info holding what MPI_INFO_ENV would say now; callable before MPI_Init.
// argc and argv may be NULL; weft takes the command from the running program either way.
extern "C" int PMPI_Info_create_env(int, char*[], MPI_Info* info) {
  if (int rc = check_out("MPI_Info_create_env", "info", info); rc != MPI_SUCCESS) return rc;
  *info = new weft_mpi_info{environment()};
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Info_create_env);
