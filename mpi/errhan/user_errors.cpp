// MPI_Add_error_class, MPI_Add_error_code, MPI_Add_error_string and MPI-4.1's
// MPI_Remove_error_class, MPI_Remove_error_code and MPI_Remove_error_string.
#include "errhan/user_errors.h"

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "errhan/error.h"
#include "util/profiling.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi::user_errors {

namespace {

struct Entry {
  int error_class;  // itself for a class
  std::string text;
  int codes = 0;  // for a class: the codes added to it and not removed
};

// Critical sections are map operations; the calls are rare, so one spin lock suffices.
struct Registry {
  weft::detail::SpinLock lock;
  std::map<int, Entry> entries;  // by value, ascending

  // The next value: one past the largest in use, so that removing the newest ones lets their
  // values be used again (a program that adds and removes in a loop does not run out).
  int next() const { return (entries.empty() ? MPI_ERR_LASTCODE : entries.rbegin()->first) + 1; }
};

// Never destroyed: a rank may raise a user code while the process exits.
Registry& registry() {
  static Registry* const instance = new Registry;
  return *instance;
}

// A predefined class weft knows (MPI_Add_error_code may add codes to those too).
bool predefined_class(int value) {
  return value >= MPI_SUCCESS && value < MPI_ERR_LASTCODE &&
         error_class_name(value) != "MPI_ERR_UNKNOWN";
}

int fail(std::string_view function, int error_class, const std::string& detail) {
  return raise(MPI_COMM_WORLD, function, error_class, detail);
}

}  // namespace

std::optional<int> class_of(int code) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const auto it = r.entries.find(code);
  if (it == r.entries.end()) return std::nullopt;
  return it->second.error_class;
}

std::optional<std::string> string_of(int code) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const auto it = r.entries.find(code);
  if (it == r.entries.end()) return std::nullopt;
  return it->second.text;
}

int last_used() {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  return r.next() - 1;
}

}  // namespace weft::mpi::user_errors

using weft::mpi::check_initialized;
using weft::mpi::user_errors::fail;
using weft::mpi::user_errors::registry;
using Registry = weft::mpi::user_errors::Registry;

extern "C" int PMPI_Add_error_class(int* errorclass) {
  constexpr std::string_view kFunction = "MPI_Add_error_class";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (errorclass == nullptr) {
    return fail(kFunction, MPI_ERR_ARG, "errorclass = NULL, expected where to store the class");
  }
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const int value = r.next();
  r.entries.emplace(value, weft::mpi::user_errors::Entry{value, {}});
  *errorclass = value;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Add_error_class);

extern "C" int PMPI_Add_error_code(int errorclass, int* errorcode) {
  constexpr std::string_view kFunction = "MPI_Add_error_code";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (errorcode == nullptr) {
    return fail(kFunction, MPI_ERR_ARG, "errorcode = NULL, expected where to store the code");
  }
  Registry& r = registry();
  std::unique_lock guard(r.lock);
  const auto cls = r.entries.find(errorclass);
  const bool user_class = cls != r.entries.end() && cls->second.error_class == errorclass;
  if (!user_class && !weft::mpi::user_errors::predefined_class(errorclass)) {
    guard.unlock();
    return fail(kFunction, MPI_ERR_ARG,
                "errorclass = " + std::to_string(errorclass) +
                    ", expected a predefined error class or one made by MPI_Add_error_class");
  }
  if (user_class) ++cls->second.codes;
  const int value = r.next();
  r.entries.emplace(value, weft::mpi::user_errors::Entry{errorclass, {}});
  *errorcode = value;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Add_error_code);

extern "C" int PMPI_Add_error_string(int errorcode, const char* string) {
  constexpr std::string_view kFunction = "MPI_Add_error_string";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (string == nullptr) return fail(kFunction, MPI_ERR_ARG, "string = NULL, expected a string");
  const std::size_t length = strnlen(string, MPI_MAX_ERROR_STRING);
  if (length >= MPI_MAX_ERROR_STRING) {
    return fail(kFunction, MPI_ERR_ARG,
                "string is " + std::to_string(length) +
                    " characters or more, expected fewer than MPI_MAX_ERROR_STRING (" +
                    std::to_string(MPI_MAX_ERROR_STRING) + ")");
  }
  Registry& r = registry();
  std::unique_lock guard(r.lock);
  const auto it = r.entries.find(errorcode);
  if (it == r.entries.end()) {
    guard.unlock();
    return fail(kFunction, MPI_ERR_ARG,
                "errorcode = " + std::to_string(errorcode) +
                    ", expected a class or code made by MPI_Add_error_class or "
                    "MPI_Add_error_code (the predefined ones keep their strings)");
  }
  it->second.text.assign(string, length);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Add_error_string);

namespace {

// Removes a user class (`want_class`) or code, which must have no codes left (a class).
int remove_entry(std::string_view function, int value, bool want_class) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  Registry& r = registry();
  std::unique_lock guard(r.lock);
  const auto it = r.entries.find(value);
  const bool is_class = it != r.entries.end() && it->second.error_class == value;
  if (it == r.entries.end() || is_class != want_class) {
    guard.unlock();
    return fail(function, MPI_ERR_ARG,
                std::string(want_class ? "errorclass" : "errorcode") + " = " +
                    std::to_string(value) + ", expected one made by " +
                    (want_class ? "MPI_Add_error_class" : "MPI_Add_error_code") +
                    " and not removed yet");
  }
  if (want_class && it->second.codes > 0) {
    const int codes = it->second.codes;
    guard.unlock();
    return fail(function, MPI_ERR_ARG,
                "errorclass = " + std::to_string(value) + " still has " + std::to_string(codes) +
                    " error codes, expected them removed first (MPI_Remove_error_code)");
  }
  if (!want_class) {
    if (const auto cls = r.entries.find(it->second.error_class); cls != r.entries.end()) {
      --cls->second.codes;
    }
  }
  r.entries.erase(it);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Remove_error_class(int errorclass) {
  return remove_entry("MPI_Remove_error_class", errorclass, true);
}
WEFT_MPI_ALIAS(MPI_Remove_error_class);

extern "C" int PMPI_Remove_error_code(int errorcode) {
  return remove_entry("MPI_Remove_error_code", errorcode, false);
}
WEFT_MPI_ALIAS(MPI_Remove_error_code);

extern "C" int PMPI_Remove_error_string(int errorcode) {
  constexpr std::string_view kFunction = "MPI_Remove_error_string";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  Registry& r = registry();
  std::unique_lock guard(r.lock);
  const auto it = r.entries.find(errorcode);
  if (it == r.entries.end() || it->second.text.empty()) {
    guard.unlock();
    return fail(kFunction, MPI_ERR_ARG,
                "errorcode = " + std::to_string(errorcode) +
                    ", expected a user class or code with a string added by "
                    "MPI_Add_error_string");
  }
  it->second.text.clear();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Remove_error_string);
