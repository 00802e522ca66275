// MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size (MPI-4.1 5.2.3): the
// "external32" representation, big-endian with the standard's sizes (MPI-4.1 19.3.11), readable
// by any MPI on any machine. The data is first packed natively (datatype.cpp's copy), then each
// predefined value of the type's signature is converted; unpacking runs the other way.
#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "datatype/datatype_checks.h"
#include "datatype/datatype_layout.h"
#include "errhan/error.h"
#include "util/profiling.h"

namespace checks = weft::mpi::datatype_checks;
using weft::mpi::TypeCode;

namespace {

static_assert(std::endian::native == std::endian::little ||
              std::endian::native == std::endian::big);

// The predefined types of one element in type-map order, as runs (type, how many).
using Signature = std::vector<std::pair<MPI_Datatype, std::size_t>>;

void append(Signature& signature, MPI_Datatype type, std::size_t count) {
  if (count == 0) return;
  if (!signature.empty() && signature.back().first == type) {
    signature.back().second += count;
    return;
  }
  signature.emplace_back(type, count);
}

void append_repeated(Signature& signature, const Signature& part, std::size_t times) {
  if (part.size() == 1) {
    append(signature, part.front().first, part.front().second * times);
    return;
  }
  for (std::size_t i = 0; i < times; ++i) {
    for (const auto& [type, count] : part) append(signature, type, count);
  }
}

// Only a struct mixes old types; every other constructor repeats its one old type's signature as
// many times as its data holds.
Signature signature_of(MPI_Datatype type) {
  Signature signature;
  if (type->predefined()) {
    append(signature, type, 1);
    return signature;
  }
  const weft::mpi::Contents& contents = type->layout->parts->contents;
  if (contents.combiner == MPI_COMBINER_STRUCT) {
    for (std::size_t i = 0; i < contents.types.size(); ++i) {
      append_repeated(signature, signature_of(contents.types[i]),
                      static_cast<std::size_t>(contents.integers[i + 1]));
    }
    return signature;
  }
  const MPI_Datatype old = contents.types.front();
  if (old->size() == 0) return signature;
  append_repeated(signature, signature_of(old), type->size() / old->size());
  return signature;
}

// One value's native and external32 sizes, and how to convert it.
enum class Conversion { bytes, swap, long_double, boolean };

struct Scalar {
  std::size_t native;
  std::size_t external;
  Conversion conversion;
};

constexpr Scalar scalar(std::size_t native) {
  return {native, native, native == 1 ? Conversion::bytes : Conversion::swap};
}

// The scalars a predefined type is made of (a pair type: value then index; a complex: two parts).
std::vector<Scalar> scalars_of(MPI_Datatype type) {
  constexpr Scalar kLongDouble{sizeof(long double), 16, Conversion::long_double};
  switch (type->layout->code) {
    case TypeCode::long_double:
      return {kLongDouble};
    case TypeCode::c_bool:
    case TypeCode::cxx_bool:
      return {{1, 1, Conversion::boolean}};
    case TypeCode::float_complex:
      return {scalar(4), scalar(4)};
    case TypeCode::double_complex:
      return {scalar(8), scalar(8)};
    case TypeCode::long_double_complex:
      return {kLongDouble, kLongDouble};
    case TypeCode::float_int:
      return {scalar(sizeof(float)), scalar(sizeof(int))};
    case TypeCode::double_int:
      return {scalar(sizeof(double)), scalar(sizeof(int))};
    case TypeCode::long_int:
      return {scalar(sizeof(long)), scalar(sizeof(int))};
    case TypeCode::two_int:
      return {scalar(sizeof(int)), scalar(sizeof(int))};
    case TypeCode::short_int:
      return {scalar(sizeof(short)), scalar(sizeof(int))};
    case TypeCode::two_float:
      return {scalar(sizeof(float)), scalar(sizeof(float))};
    case TypeCode::two_double:
      return {scalar(sizeof(double)), scalar(sizeof(double))};
    case TypeCode::float128_complex:
      return {scalar(16), scalar(16)};
    case TypeCode::long_double_int:
      return {kLongDouble, scalar(sizeof(int))};
    default:
      return {scalar(type->size())};
  }
}

std::size_t external_size(MPI_Datatype predefined) {
  std::size_t size = 0;
  for (const Scalar& s : scalars_of(predefined)) size += s.external;
  return size;
}

std::size_t external_size(const Signature& signature) {
  std::size_t size = 0;
  for (const auto& [type, count] : signature) size += external_size(type) * count;
  return size;
}

void to_big_endian(const unsigned char* in, unsigned char* out, std::size_t n) {
  if constexpr (std::endian::native == std::endian::big) {
    std::memcpy(out, in, n);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = in[n - 1 - i];
  }
}

// IEEE binary128, as 16 bytes in native byte order, from the native long double and back. x86's
// 80-bit format has binary128's sign and exponent; its 64-bit mantissa carries the integer bit
// explicitly, and binary128's 112-bit fraction holds its other 63 bits exactly. The way back
// drops the 49 low fraction bits no x87 value has (a value packed elsewhere at full precision is
// truncated to long double's).
void long_double_to_binary128(const unsigned char* in, unsigned char* out) {
  if constexpr (std::numeric_limits<long double>::digits == 64) {
    std::uint64_t mantissa = 0;
    std::uint16_t sign_exponent = 0;
    std::memcpy(&mantissa, in, 8);
    std::memcpy(&sign_exponent, in + 8, 2);
    const std::uint64_t fraction = mantissa & ~(std::uint64_t{1} << 63);
    const std::uint64_t low = fraction << 49;
    const std::uint64_t high = (std::uint64_t{sign_exponent} << 48) | (fraction >> 15);
    std::memcpy(out, &low, 8);
    std::memcpy(out + 8, &high, 8);
  } else if constexpr (std::numeric_limits<long double>::digits == 113) {
    std::memcpy(out, in, 16);
  } else {
    // long double is double: widen it.
    double value = 0;
    std::memcpy(&value, in, sizeof(double));
    const auto bits = std::bit_cast<std::uint64_t>(value);
    const std::uint64_t sign = bits >> 63;
    const std::uint64_t exponent = (bits >> 52) & 0x7ff;
    const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
    const std::uint64_t wide_exponent = exponent == 0       ? 0
                                        : exponent == 0x7ff ? 0x7fff
                                                            : exponent - 1023 + 16383;
    const std::uint64_t low = fraction << 60;
    const std::uint64_t high = (sign << 63) | (wide_exponent << 48) | (fraction >> 4);
    std::memcpy(out, &low, 8);
    std::memcpy(out + 8, &high, 8);
  }
}

void binary128_to_long_double(const unsigned char* in, unsigned char* out) {
  std::uint64_t low = 0, high = 0;
  std::memcpy(&low, in, 8);
  std::memcpy(&high, in + 8, 8);
  const auto sign_exponent = static_cast<std::uint16_t>(high >> 48);
  const std::uint64_t fraction_high = high & ((std::uint64_t{1} << 48) - 1);
  if constexpr (std::numeric_limits<long double>::digits == 64) {
    const std::uint64_t fraction = (fraction_high << 15) | (low >> 49);
    const bool normal = (sign_exponent & 0x7fff) != 0;
    const std::uint64_t mantissa = fraction | (normal ? std::uint64_t{1} << 63 : 0);
    std::memset(out, 0, sizeof(long double));
    std::memcpy(out, &mantissa, 8);
    std::memcpy(out + 8, &sign_exponent, 2);
  } else if constexpr (std::numeric_limits<long double>::digits == 113) {
    std::memcpy(out, in, 16);
  } else {
    const std::uint64_t sign = sign_exponent >> 15;
    const int exponent = sign_exponent & 0x7fff;
    std::uint64_t narrow_exponent = 0;
    if (exponent == 0x7fff) {
      narrow_exponent = 0x7ff;
    } else if (exponent != 0) {
      narrow_exponent = static_cast<std::uint64_t>(std::clamp(exponent - 16383 + 1023, 0, 0x7ff));
    }
    const std::uint64_t fraction = (fraction_high << 4) | (low >> 60);
    const double value = std::bit_cast<double>((sign << 63) | (narrow_exponent << 52) | fraction);
    std::memcpy(out, &value, sizeof(double));
  }
}

enum class Direction { to_external, to_native };

// Converts `signature` repeated `count` times between the native packed stream and external32.
void convert(const Signature& signature, std::size_t count, const unsigned char* in,
             unsigned char* out, Direction direction) {
  for (std::size_t element = 0; element < count; ++element) {
    for (const auto& [type, n] : signature) {
      const std::vector<Scalar> scalars = scalars_of(type);
      for (std::size_t k = 0; k < n; ++k) {
        for (const Scalar& s : scalars) {
          const bool outward = direction == Direction::to_external;
          const std::size_t in_size = outward ? s.native : s.external;
          const std::size_t out_size = outward ? s.external : s.native;
          switch (s.conversion) {
            case Conversion::bytes:
              std::memcpy(out, in, s.native);
              break;
            case Conversion::boolean:
              // external32 booleans are 0 or 1, whatever byte a true value holds here.
              *out = *in != 0 ? 1 : 0;
              break;
            case Conversion::swap:
              to_big_endian(in, out, s.native);
              break;
            case Conversion::long_double: {
              unsigned char quad[16];
              if (outward) {
                long_double_to_binary128(in, quad);
                to_big_endian(quad, out, 16);
              } else {
                to_big_endian(in, quad, 16);
                binary128_to_long_double(quad, out);
              }
              break;
            }
          }
          in += in_size;
          out += out_size;
        }
      }
    }
  }
}

int check_datarep(std::string_view function, const char* datarep) {
  if (datarep != nullptr && std::string_view(datarep) == "external32") return MPI_SUCCESS;
  // Appended piece by piece: "\"" + std::string(...) makes GCC 12 at -O3 report a false
  // -Wrestrict on the inlined insert.
  std::string text = "datarep = ";
  if (datarep == nullptr) {
    text += "NULL";
  } else {
    text += '"';
    text += datarep;
    text += '"';
  }
  text += ", expected \"external32\"";
  return checks::fail(function, MPI_ERR_ARG, text);
}

// What Pack_external and Unpack_external share: the typed side and the packed side's position.
int check_external(std::string_view function, const char* datarep, std::string_view typed_name,
                   const void* typed, int count, MPI_Datatype datatype, MPI_Aint packed_size,
                   const MPI_Aint* position, std::size_t bytes, const void* packed) {
  if (int rc = check_datarep(function, datarep); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_count(MPI_COMM_WORLD, function,
                                      typed_name == "inbuf" ? "incount" : "outcount", count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_datatype(MPI_COMM_WORLD, function, "datatype", datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc =
          weft::mpi::check_buffer(MPI_COMM_WORLD, function, typed_name, typed, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const std::string size_name = typed_name == "inbuf" ? "outsize" : "insize";
  if (position == nullptr) {
    return checks::fail(function, MPI_ERR_ARG, "position = NULL, expected a pointer");
  }
  if (*position < 0 || *position > packed_size) {
    return checks::fail(function, MPI_ERR_ARG,
                        "*position = " + std::to_string(*position) + ", expected 0.." +
                            std::to_string(packed_size) + " (" + size_name + ")");
  }
  if (static_cast<MPI_Aint>(bytes) > packed_size - *position) {
    return checks::fail(function, MPI_ERR_TRUNCATE,
                        std::to_string(count) + " elements take " + std::to_string(bytes) +
                            " bytes in external32, expected at most " + size_name +
                            " - *position = " + std::to_string(packed_size - *position));
  }
  if (bytes > 0 && packed == nullptr) {
    return checks::fail(
        function, MPI_ERR_BUFFER,
        std::string(typed_name == "inbuf" ? "outbuf" : "inbuf") + " = NULL, expected a buffer");
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                                       MPI_Aint* size) {
  constexpr std::string_view kFunction = "MPI_Pack_external_size";
  if (int rc = check_datarep(kFunction, datarep); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::count(kFunction, "incount", incount); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::type(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = checks::pointer(kFunction, "size", size); rc != MPI_SUCCESS) return rc;
  *size = static_cast<MPI_Aint>(external_size(signature_of(datatype)) *
                                static_cast<std::size_t>(incount));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Pack_external_size);

extern "C" int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount,
                                  MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
                                  MPI_Aint* position) {
  constexpr std::string_view kFunction = "MPI_Pack_external";
  if (int rc = checks::type(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  const Signature signature = signature_of(datatype);
  const std::size_t count = incount < 0 ? 0 : static_cast<std::size_t>(incount);
  const std::size_t bytes = external_size(signature) * count;
  if (int rc = check_external(kFunction, datarep, "inbuf", inbuf, incount, datatype, outsize,
                              position, bytes, outbuf);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (bytes == 0) return MPI_SUCCESS;
  std::vector<unsigned char> native(count * datatype->size());
  weft::mpi::pack(inbuf, count, *datatype, native.data());
  convert(signature, count, native.data(), static_cast<unsigned char*>(outbuf) + *position,
          Direction::to_external);
  *position += static_cast<MPI_Aint>(bytes);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Pack_external);

extern "C" int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                                    MPI_Aint* position, void* outbuf, int outcount,
                                    MPI_Datatype datatype) {
  constexpr std::string_view kFunction = "MPI_Unpack_external";
  if (int rc = checks::type(kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  const Signature signature = signature_of(datatype);
  const std::size_t count = outcount < 0 ? 0 : static_cast<std::size_t>(outcount);
  const std::size_t bytes = external_size(signature) * count;
  if (int rc = check_external(kFunction, datarep, "outbuf", outbuf, outcount, datatype, insize,
                              position, bytes, inbuf);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (bytes == 0) return MPI_SUCCESS;
  std::vector<unsigned char> native(count * datatype->size());
  convert(signature, count, static_cast<const unsigned char*>(inbuf) + *position, native.data(),
          Direction::to_native);
  weft::mpi::unpack(native.data(), native.size(), outbuf, count, *datatype);
  *position += static_cast<MPI_Aint>(bytes);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Unpack_external);
