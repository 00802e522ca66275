// What built a datatype (MPI-4.1 5.1.13): MPI_Type_get_envelope and MPI_Type_get_contents, and
// their large-count forms. A type built by a classic constructor has integers and addresses; one
// built by a large-count constructor (_c) has its MPI_Count arguments as large counts, which the
// classic queries cannot return: they refuse such a type rather than leave the counts out.
#include <algorithm>
#include <string>
#include <type_traits>

#include "datatype/datatype_checks.h"
#include "datatype/datatype_layout.h"
#include "util/profiling.h"

namespace checks = weft::mpi::datatype_checks;
using weft::mpi::Contents;

namespace weft::mpi {

const Contents& contents_of(MPI_Datatype datatype) {
  static const Contents kNamed{};
  return datatype->predefined() ? kNamed : datatype->layout->parts->contents;
}

}  // namespace weft::mpi

namespace {

int refuse_large(std::string_view function, std::string_view large_form) {
  return checks::fail(function, MPI_ERR_TYPE,
                      "datatype was built by a large-count constructor, whose MPI_Count "
                      "arguments only " +
                          std::string(large_form) + " returns");
}

template <class Count>
int envelope(std::string_view function, MPI_Datatype datatype, Count* num_integers,
             Count* num_addresses, Count* num_large_counts, Count* num_datatypes, int* combiner) {
  if (int rc = checks::type(function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  for (auto [p, name] : {std::pair{num_integers, "num_integers"},
                         {num_addresses, "num_addresses"},
                         {num_datatypes, "num_datatypes"}}) {
    if (int rc = checks::pointer(function, name, p); rc != MPI_SUCCESS) return rc;
  }
  if (int rc = checks::pointer(function, "combiner", combiner); rc != MPI_SUCCESS) return rc;
  const Contents& c = weft::mpi::contents_of(datatype);
  if (num_large_counts == nullptr && !c.large_counts.empty()) {
    return refuse_large(function, "MPI_Type_get_envelope_c");
  }
  *num_integers = static_cast<Count>(c.integers.size());
  *num_addresses = static_cast<Count>(c.addresses.size());
  if (num_large_counts != nullptr) *num_large_counts = static_cast<Count>(c.large_counts.size());
  *num_datatypes = static_cast<Count>(c.types.size());
  *combiner = c.combiner;
  return MPI_SUCCESS;
}

template <class Count>
int contents(std::string_view function, MPI_Datatype datatype, Count max_integers,
             Count max_addresses, Count max_large_counts, Count max_datatypes,
             int array_of_integers[], MPI_Aint array_of_addresses[],
             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]) {
  if (int rc = checks::type(function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (datatype->predefined()) {
    return checks::fail(function, MPI_ERR_TYPE,
                        "datatype = " + std::string(datatype->name()) +
                            ", expected a derived datatype (MPI_Type_get_envelope says "
                            "MPI_COMBINER_NAMED: a predefined one has no contents)");
  }
  const Contents& c = weft::mpi::contents_of(datatype);
  const bool large_form = function.ends_with("_c");
  if (!large_form && !c.large_counts.empty()) {
    return refuse_large(function, "MPI_Type_get_contents_c");
  }
  struct Array {
    std::string_view max_name;
    long long max;
    std::size_t needed;
    std::string_view name;
    const void* array;
  };
  const Array arrays[] = {
      {"max_integers", max_integers, c.integers.size(), "array_of_integers", array_of_integers},
      {"max_addresses", max_addresses, c.addresses.size(), "array_of_addresses",
       array_of_addresses},
      {"max_large_counts", max_large_counts, c.large_counts.size(), "array_of_large_counts",
       array_of_large_counts},
      {"max_datatypes", max_datatypes, c.types.size(), "array_of_datatypes", array_of_datatypes},
  };
  for (const Array& a : arrays) {
    if (a.max < 0 || static_cast<unsigned long long>(a.max) < a.needed) {
      return checks::fail(function, MPI_ERR_ARG,
                          std::string(a.max_name) + " = " + std::to_string(a.max) +
                              ", expected >= " + std::to_string(a.needed) +
                              " (the envelope's count)");
    }
    if (int rc = checks::pointer(function, a.name, a.array, static_cast<long long>(a.needed));
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  std::copy(c.integers.begin(), c.integers.end(), array_of_integers);
  std::copy(c.addresses.begin(), c.addresses.end(), array_of_addresses);
  if constexpr (std::is_same_v<Count, MPI_Count>) {  // the classic form refused them above
    std::copy(c.large_counts.begin(), c.large_counts.end(), array_of_large_counts);
  }
  // The derived handles returned are the caller's to free.
  for (std::size_t i = 0; i < c.types.size(); ++i) {
    c.types[i]->retain();
    array_of_datatypes[i] = c.types[i];
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses,
                                      int* num_datatypes, int* combiner) {
  return envelope<int>("MPI_Type_get_envelope", datatype, num_integers, num_addresses, nullptr,
                       num_datatypes, combiner);
}
WEFT_MPI_ALIAS(MPI_Type_get_envelope);

extern "C" int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers,
                                        MPI_Count* num_addresses, MPI_Count* num_large_counts,
                                        MPI_Count* num_datatypes, int* combiner) {
  constexpr std::string_view kFunction = "MPI_Type_get_envelope_c";
  if (int rc = checks::pointer(kFunction, "num_large_counts", num_large_counts);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return envelope<MPI_Count>(kFunction, datatype, num_integers, num_addresses, num_large_counts,
                             num_datatypes, combiner);
}
WEFT_MPI_ALIAS(MPI_Type_get_envelope_c);

extern "C" int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                                      int max_datatypes, int array_of_integers[],
                                      MPI_Aint array_of_addresses[],
                                      MPI_Datatype array_of_datatypes[]) {
  return contents<int>("MPI_Type_get_contents", datatype, max_integers, max_addresses, 0,
                       max_datatypes, array_of_integers, array_of_addresses, nullptr,
                       array_of_datatypes);
}
WEFT_MPI_ALIAS(MPI_Type_get_contents);

extern "C" int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                                        MPI_Count max_addresses, MPI_Count max_large_counts,
                                        MPI_Count max_datatypes, int array_of_integers[],
                                        MPI_Aint array_of_addresses[],
                                        MPI_Count array_of_large_counts[],
                                        MPI_Datatype array_of_datatypes[]) {
  return contents<MPI_Count>("MPI_Type_get_contents_c", datatype, max_integers, max_addresses,
                             max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                             array_of_large_counts, array_of_datatypes);
}
WEFT_MPI_ALIAS(MPI_Type_get_contents_c);
