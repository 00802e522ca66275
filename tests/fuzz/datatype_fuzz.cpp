// Derived datatypes built by the MPI_Type_* constructors from the input, then packed, unpacked and
// copied (mpi/datatype/datatype.h: what MPI_Pack, MPI_Unpack and every message use) and compared
// with a naive reference written here: each type's type map as a list of byte runs, walked element
// by element. Sizes, bounds and true bounds are compared with MPI_Type_size, _get_extent and
// _get_true_extent.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "datatype/datatype.h"
#include "fuzz_input.h"
#include "mpi.h"

namespace {

using weft::fuzz::require;

// The reference: runs of bytes in type-map order, and the bounds MPI-4.1 5.1 gives them.
struct Run {
  MPI_Aint displacement;
  MPI_Aint length;
};

struct Model {
  MPI_Datatype handle;
  std::vector<Run> map;
  bool has_bounds;  // a non-empty type map or bounds set explicitly inside
  MPI_Aint lb = 0, ub = 0;
  std::size_t alignment;
  bool explicit_bounds = false;
  bool predefined = false;

  MPI_Aint extent() const { return ub - lb; }
  MPI_Aint size() const {
    MPI_Aint total = 0;
    for (const Run& run : map) total += run.length;
    return total;
  }
};

Model predefined(MPI_Datatype handle, std::vector<Run> map, MPI_Aint extent, std::size_t align) {
  return {handle, std::move(map), true, 0, extent, align, false, true};
}

struct DoubleInt {
  double value;
  int index;
};
struct ShortInt {
  short value;
  int index;
};

std::vector<Model> predefined_models() {
  return {predefined(MPI_BYTE, {{0, 1}}, 1, 1),
          predefined(MPI_SHORT, {{0, 2}}, 2, alignof(short)),
          predefined(MPI_INT, {{0, 4}}, 4, alignof(int)),
          predefined(MPI_DOUBLE, {{0, 8}}, 8, alignof(double)),
          predefined(MPI_2INT, {{0, 4}, {4, 4}}, 8, alignof(int)),
          predefined(MPI_DOUBLE_INT, {{0, 8}, {offsetof(DoubleInt, index), 4}}, sizeof(DoubleInt),
                     alignof(DoubleInt)),
          predefined(MPI_SHORT_INT, {{0, 2}, {offsetof(ShortInt, index), 4}}, sizeof(ShortInt),
                     alignof(ShortInt))};
}

// Past these the input is refused: the reference walks every byte run.
constexpr std::size_t kMaxRuns = 1 << 12;
constexpr MPI_Aint kMaxSpan = 1 << 16;

// A constructor's pieces: count elements of a model, extent apart, at a byte displacement.
struct Piece {
  MPI_Aint displacement;
  MPI_Aint count;
  const Model* type;
};

// The model of a type built from `pieces` (MPI-4.1 5.1.2-5.1.7): the pieces' type maps in
// order; bounds from the pieces with a type map or explicit bounds; a struct's extent padded to
// its alignment unless bounds were set inside. False when it would be too large to walk.
bool combine(const std::vector<Piece>& pieces, bool pad, Model& out) {
  out.map.clear();
  out.has_bounds = false;
  out.alignment = 1;
  out.explicit_bounds = false;
  MPI_Aint lb = std::numeric_limits<MPI_Aint>::max(), ub = std::numeric_limits<MPI_Aint>::min();
  for (const Piece& piece : pieces) {
    if (piece.count == 0) continue;
    const Model& old = *piece.type;
    if (!old.map.empty()) out.alignment = std::max(out.alignment, old.alignment);
    out.explicit_bounds = out.explicit_bounds || old.explicit_bounds;
    for (MPI_Aint k = 0; k < piece.count; ++k) {
      const MPI_Aint base = piece.displacement + k * old.extent();
      if (!old.map.empty() || old.explicit_bounds) {
        lb = std::min(lb, base + old.lb);
        ub = std::max(ub, base + old.ub);
        out.has_bounds = true;
      }
      for (const Run& run : old.map) {
        if (out.map.size() >= kMaxRuns) return false;
        out.map.push_back({base + run.displacement, run.length});
      }
    }
  }
  out.lb = out.has_bounds ? lb : 0;
  out.ub = out.has_bounds ? ub : 0;
  if (pad && !out.explicit_bounds) {
    const auto align = static_cast<MPI_Aint>(out.alignment);
    if (const MPI_Aint over = out.extent() % align; over != 0) out.ub += align - over;
  }
  if (out.has_bounds && (out.ub - out.lb > kMaxSpan || out.lb < -kMaxSpan || out.ub > kMaxSpan)) {
    return false;
  }
  return true;
}

// Builds one new type from the pool with a constructor the input picks; false when the input
// asks for what the reference refuses to walk (the MPI type, if made, is freed).
bool build_one(weft::fuzz::Input& input, std::vector<Model>& pool) {
  const Model& old = pool[input.below(static_cast<std::uint32_t>(pool.size()))];
  const int constructor = static_cast<int>(input.below(10));
  const int count = static_cast<int>(input.below(5));
  auto small = [&](int low, int high) {
    return low + static_cast<int>(input.below(static_cast<std::uint32_t>(high - low + 1)));
  };
  std::vector<Piece> pieces;
  Model made{};
  bool pad = false;
  int rc = MPI_SUCCESS;
  switch (constructor) {
    case 0:
      pieces.push_back({0, count, &old});
      rc = MPI_Type_contiguous(count, old.handle, &made.handle);
      break;
    case 1:
    case 2: {
      const int block = small(0, 3);
      const int stride = small(-4, 4);
      const MPI_Aint step = constructor == 1 ? stride * old.extent() : stride * small(1, 8);
      for (int i = 0; i < count; ++i) pieces.push_back({i * step, block, &old});
      rc = constructor == 1 ? MPI_Type_vector(count, block, stride, old.handle, &made.handle)
                            : MPI_Type_create_hvector(count, block, step, old.handle, &made.handle);
      break;
    }
    case 3:
    case 4: {
      std::vector<int> lengths(count), displacements(count);
      std::vector<MPI_Aint> bytes(count);
      for (int i = 0; i < count; ++i) {
        lengths[i] = small(0, 3);
        displacements[i] = small(-4, 4);
        bytes[i] = small(-32, 32);
        pieces.push_back(
            {constructor == 3 ? displacements[i] * old.extent() : bytes[i], lengths[i], &old});
      }
      rc = constructor == 3 ? MPI_Type_indexed(count, lengths.data(), displacements.data(),
                                               old.handle, &made.handle)
                            : MPI_Type_create_hindexed(count, lengths.data(), bytes.data(),
                                                       old.handle, &made.handle);
      break;
    }
    case 5:
    case 6: {
      const int block = small(0, 3);
      std::vector<int> displacements(count);
      std::vector<MPI_Aint> bytes(count);
      for (int i = 0; i < count; ++i) {
        displacements[i] = small(-4, 4);
        bytes[i] = small(-32, 32);
        pieces.push_back(
            {constructor == 5 ? displacements[i] * old.extent() : bytes[i], block, &old});
      }
      rc = constructor == 5 ? MPI_Type_create_indexed_block(count, block, displacements.data(),
                                                            old.handle, &made.handle)
                            : MPI_Type_create_hindexed_block(count, block, bytes.data(), old.handle,
                                                             &made.handle);
      break;
    }
    case 7: {
      std::vector<int> lengths(count);
      std::vector<MPI_Aint> bytes(count);
      std::vector<MPI_Datatype> types(count);
      for (int i = 0; i < count; ++i) {
        const Model& member = pool[input.below(static_cast<std::uint32_t>(pool.size()))];
        lengths[i] = small(0, 3);
        bytes[i] = small(-32, 32);
        types[i] = member.handle;
        pieces.push_back({bytes[i], lengths[i], &member});
      }
      pad = true;
      rc = MPI_Type_create_struct(count, lengths.data(), bytes.data(), types.data(), &made.handle);
      break;
    }
    case 8: {
      const MPI_Aint lb = small(-32, 32), extent = small(0, 64);
      pieces.push_back({0, 1, &old});
      rc = MPI_Type_create_resized(old.handle, lb, extent, &made.handle);
      if (rc == MPI_SUCCESS && combine(pieces, false, made)) {
        made.lb = lb;
        made.ub = lb + extent;
        made.has_bounds = true;
        made.explicit_bounds = true;
        pool.push_back(std::move(made));
        return true;
      }
      break;
    }
    case 9:
      rc = MPI_Type_dup(old.handle, &made.handle);
      if (rc == MPI_SUCCESS) {
        const MPI_Datatype handle = made.handle;
        made = old;
        made.handle = handle;
        made.predefined = false;
        pool.push_back(std::move(made));
        return true;
      }
      break;
  }
  require(rc == MPI_SUCCESS, "constructor " + std::to_string(constructor) +
                                 " refused valid "
                                 "arguments: " +
                                 std::to_string(rc));
  if (constructor != 8 && combine(pieces, pad, made)) {
    pool.push_back(std::move(made));
    return true;
  }
  MPI_Type_free(&made.handle);
  return false;
}

std::string describe(const Model& model) {
  return "type of " + std::to_string(model.map.size()) + " runs, lb " + std::to_string(model.lb) +
         ", extent " + std::to_string(model.extent());
}

void check_bounds(const Model& model) {
  int size = -1;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  require(MPI_Type_size(model.handle, &size) == MPI_SUCCESS, "MPI_Type_size failed");
  require(MPI_Type_get_extent(model.handle, &lb, &extent) == MPI_SUCCESS, "get_extent failed");
  require(MPI_Type_get_true_extent(model.handle, &true_lb, &true_extent) == MPI_SUCCESS,
          "get_true_extent failed");
  require(size == model.size(), describe(model) + ": MPI_Type_size " + std::to_string(size) +
                                    ", expected " + std::to_string(model.size()));
  require(lb == model.lb && extent == model.extent(),
          describe(model) + ": MPI_Type_get_extent gives lb " + std::to_string(lb) + ", extent " +
              std::to_string(extent));
  if (model.map.empty()) return;
  MPI_Aint low = std::numeric_limits<MPI_Aint>::max(), high = std::numeric_limits<MPI_Aint>::min();
  for (const Run& run : model.map) {
    low = std::min(low, run.displacement);
    high = std::max(high, run.displacement + run.length);
  }
  require(true_lb == low && true_extent == high - low,
          describe(model) + ": true lb " + std::to_string(true_lb) + " and extent " +
              std::to_string(true_extent) + ", expected " + std::to_string(low) + " and " +
              std::to_string(high - low));
}

// Packs, unpacks and copies `count` elements of `model`, against the reference walk.
void check_data(const Model& model, std::size_t count, weft::fuzz::Input& input) {
  if (model.size() == 0 || count == 0) return;
  // The bytes the elements touch, and nothing more, so that ASan sees a step outside them.
  MPI_Aint low = std::numeric_limits<MPI_Aint>::max(), high = std::numeric_limits<MPI_Aint>::min();
  for (std::size_t e = 0; e < count; ++e) {
    for (const Run& run : model.map) {
      const MPI_Aint at = static_cast<MPI_Aint>(e) * model.extent() + run.displacement;
      low = std::min(low, at);
      high = std::max(high, at + run.length);
    }
  }
  std::vector<unsigned char> memory(static_cast<std::size_t>(high - low));
  for (std::size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<unsigned char>(i * 7 + 1);
  unsigned char* origin = memory.data() - low;
  std::vector<unsigned char> expected;
  std::vector<bool> written(memory.size());
  bool overlaps = false;
  for (std::size_t e = 0; e < count; ++e) {
    for (const Run& run : model.map) {
      const MPI_Aint at = static_cast<MPI_Aint>(e) * model.extent() + run.displacement;
      expected.insert(expected.end(), origin + at, origin + at + run.length);
      for (MPI_Aint b = at - low; b < at - low + run.length; ++b) {
        overlaps = overlaps || written[b];
        written[b] = true;
      }
    }
  }
  const std::size_t bytes = expected.size();
  std::vector<unsigned char> packed(bytes);
  weft::mpi::pack(origin, count, *model.handle, packed.data());
  require(packed == expected, describe(model) + ": pack of " + std::to_string(count) +
                                  " elements differs from the type map");
  // copy to bytes, in a range the input picks: the same slice of the stream.
  const std::size_t offset = input.below(static_cast<std::uint32_t>(bytes));
  const std::size_t length = input.below(static_cast<std::uint32_t>(bytes - offset + 1));
  std::vector<unsigned char> slice(bytes);
  const std::size_t moved = weft::mpi::copy_range(origin, count, *model.handle, slice.data(), bytes,
                                                  *MPI_BYTE, offset, length);
  require(moved == length && std::equal(slice.begin() + offset, slice.begin() + offset + length,
                                        expected.begin() + offset),
          describe(model) + ": copy_range [" + std::to_string(offset) + ", +" +
              std::to_string(length) + ") differs from the packed stream");
  // Unpacking writes each run once: only a type map without overlaps has one outcome.
  if (overlaps) return;
  std::vector<unsigned char> target(memory.size(), 0);
  unsigned char* target_origin = target.data() - low;
  weft::mpi::unpack(packed.data(), bytes, target_origin, count, *model.handle);
  for (std::size_t i = 0; i < target.size(); ++i) {
    require(target[i] == (written[i] ? memory[i] : 0),
            describe(model) + ": unpack of " + std::to_string(count) + " elements wrote byte " +
                std::to_string(static_cast<MPI_Aint>(i) + low) + " wrong");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  weft::fuzz::Input input(data, size);
  std::vector<Model> pool = predefined_models();
  const std::size_t first_derived = pool.size();
  const int steps = 1 + static_cast<int>(input.below(6));
  for (int step = 0; step < steps; ++step) build_one(input, pool);
  // A derived type when one was made, else a predefined one.
  const std::size_t derived = pool.size() - first_derived;
  Model& chosen =
      derived > 0 ? pool[first_derived + input.below(derived)] : pool[input.below(first_derived)];
  if (!chosen.predefined) {
    require(MPI_Type_commit(&chosen.handle) == MPI_SUCCESS, "MPI_Type_commit failed");
  }
  check_bounds(chosen);
  check_data(chosen, input.below(4), input);
  for (std::size_t i = first_derived; i < pool.size(); ++i) MPI_Type_free(&pool[i].handle);
  return 0;
}
