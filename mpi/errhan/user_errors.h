// Error classes, codes and strings the program adds (MPI-4.1 9.5): MPI_Add_error_class,
// MPI_Add_error_code, MPI_Add_error_string and their MPI_Remove_ counterparts. They are
// process-wide, as keyvals are: the ranks of a process are one MPI library instance, and the
// standard lets each MPI process number its classes differently. Values follow MPI_ERR_LASTCODE;
// MPI_LASTUSEDCODE is the largest in use.
#pragma once

#include <optional>
#include <string>

namespace weft::mpi::user_errors {

// The class of a user-added class or code; nullopt for any other value.
std::optional<int> class_of(int code);
// The string added for a user class or code ("" when none was); nullopt for any other value.
std::optional<std::string> string_of(int code);
// The value of the MPI_LASTUSEDCODE attribute now.
int last_used();

}  // namespace weft::mpi::user_errors
