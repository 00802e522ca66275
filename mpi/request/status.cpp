// What a status says about a received message: MPI_Get_count and MPI_Get_elements.
#include <algorithm>
#include <climits>
#include <vector>

#include "datatype/datatype.h"
#include "errhan/error.h"
#include "util/profiling.h"

namespace {

int check_status_call(std::string_view function, const MPI_Status* status, MPI_Datatype datatype,
                      const void* count) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (status == nullptr || count == nullptr) {
    return weft::mpi::raise(MPI_COMM_WORLD, function, MPI_ERR_ARG,
                            status == nullptr ? "status = NULL, expected a status"
                                              : "count = NULL, expected where to store it");
  }
  return weft::mpi::check_datatype(MPI_COMM_WORLD, function, "datatype", datatype);
}

// Counts the basic elements in the first `bytes` of a stream of `repeat` elements of `type`,
// walking the type's constructors in type-map order (MPI-3.1 4.1.11). `bytes` is what remains;
// `partial` says the stream ended inside a basic element.
struct ElementCount {
  std::size_t bytes;
  MPI_Count elements = 0;
  bool partial = false;
};

void count_elements(MPI_Datatype type, MPI_Count repeat, ElementCount& count);

// The constructor arguments of a derived type, freeing the derived types they hand out.
struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> integers;
  std::vector<MPI_Datatype> types;

  explicit Contents(MPI_Datatype type) {
    int ni = 0, na = 0, nt = 0;
    PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner);
    if (combiner == MPI_COMBINER_NAMED) return;
    integers.resize(static_cast<std::size_t>(ni));
    std::vector<MPI_Aint> addresses(static_cast<std::size_t>(na));
    types.resize(static_cast<std::size_t>(nt));
    PMPI_Type_get_contents(type, ni, na, nt, integers.data(), addresses.data(), types.data());
  }
  ~Contents() {
    for (MPI_Datatype& t : types) {
      if (!t->predefined()) PMPI_Type_free(&t);
    }
  }
};

// One element of a derived type, in type-map order.
void count_one(MPI_Datatype type, ElementCount& count) {
  const Contents c(type);
  auto sum_blocks = [&](std::size_t first, std::size_t n) {
    MPI_Count total = 0;
    for (std::size_t i = 0; i < n; ++i) total += c.integers[first + i];
    return total;
  };
  switch (c.combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      count_elements(c.types[0], 1, count);
      break;
    case MPI_COMBINER_CONTIGUOUS:
      count_elements(c.types[0], c.integers[0], count);
      break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
      count_elements(c.types[0], MPI_Count{c.integers[0]} * c.integers[1], count);
      break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
      count_elements(c.types[0], sum_blocks(1, static_cast<std::size_t>(c.integers[0])), count);
      break;
    case MPI_COMBINER_STRUCT:
      for (int i = 0; i < c.integers[0] && count.bytes > 0; ++i) {
        count_elements(c.types[i], c.integers[1 + i], count);
      }
      break;
    default:  // a predefined pair type (MPI_FLOAT_INT...): two basic elements
      count.elements += count.bytes >= type->size() ? 2 : 1;
      count.partial = count.bytes < type->size() && count.bytes % type->size() != 0;
      count.bytes -= std::min(count.bytes, type->size());
      break;
  }
}

MPI_Count elements_per_element(MPI_Datatype type) {
  ElementCount whole{type->size()};
  count_one(type, whole);
  return whole.elements;
}

void count_elements(MPI_Datatype type, MPI_Count repeat, ElementCount& count) {
  const std::size_t size = type->size();
  if (size == 0 || repeat <= 0 || count.bytes == 0) return;
  if (const weft_mpi_datatype* basic = type->basic(); basic != nullptr) {
    const std::size_t take = std::min(count.bytes, size * static_cast<std::size_t>(repeat));
    count.elements += static_cast<MPI_Count>(take / basic->size());
    if (take % basic->size() != 0) count.partial = true;
    count.bytes -= take;
    return;
  }
  const MPI_Count whole = std::min<MPI_Count>(repeat, count.bytes / size);
  if (whole > 0) {
    count.elements += whole * elements_per_element(type);
    count.bytes -= static_cast<std::size_t>(whole) * size;
  }
  if (whole < repeat && count.bytes > 0) count_one(type, count);
}

}  // namespace

extern "C" int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  if (int rc = check_status_call("MPI_Get_count", status, datatype, count); rc != MPI_SUCCESS) {
    return rc;
  }
  const std::size_t size = datatype->size();
  const auto bytes = static_cast<std::size_t>(status->weft_bytes);
  if (size == 0) {
    *count = 0;
  } else if (bytes % size != 0 || bytes / size > INT_MAX) {
    *count = MPI_UNDEFINED;
  } else {
    *count = static_cast<int>(bytes / size);
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Get_count);

extern "C" int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype,
                                   MPI_Count* count) {
  if (int rc = check_status_call("MPI_Get_elements_x", status, datatype, count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  ElementCount elements{static_cast<std::size_t>(status->weft_bytes)};
  // Enough repetitions to cover every received byte.
  const std::size_t size = datatype->size();
  count_elements(datatype, size == 0 ? 0 : static_cast<MPI_Count>(elements.bytes / size + 1),
                 elements);
  *count = elements.partial ? MPI_UNDEFINED : elements.elements;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Get_elements_x);

extern "C" int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  if (int rc = check_status_call("MPI_Get_elements", status, datatype, count); rc != MPI_SUCCESS) {
    return rc;
  }
  MPI_Count elements = 0;
  PMPI_Get_elements_x(status, datatype, &elements);
  *count = elements > INT_MAX ? MPI_UNDEFINED : static_cast<int>(elements);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Get_elements);
