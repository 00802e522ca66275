#include "rma/accumulate.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "datatype/datatype_layout.h"
#include "init/world.h"
#include "op/op.h"
#include "op/op_object.h"

namespace weft::mpi::rma {

namespace {

bool integer(TypeCode code) {
  switch (code) {
    case TypeCode::char_:
    case TypeCode::wchar:
    case TypeCode::signed_char:
    case TypeCode::unsigned_char:
    case TypeCode::short_:
    case TypeCode::unsigned_short:
    case TypeCode::int_:
    case TypeCode::unsigned_:
    case TypeCode::long_:
    case TypeCode::unsigned_long:
    case TypeCode::long_long:
    case TypeCode::unsigned_long_long:
    case TypeCode::int8:
    case TypeCode::int16:
    case TypeCode::int32:
    case TypeCode::int64:
    case TypeCode::uint8:
    case TypeCode::uint16:
    case TypeCode::uint32:
    case TypeCode::uint64:
    case TypeCode::aint:
    case TypeCode::count:
    case TypeCode::offset:
    case TypeCode::byte:
    case TypeCode::c_bool:
    case TypeCode::cxx_bool:
      return true;
    default:
      return false;
  }
}

// The element type an atomic instruction can update whole, or null.
const Datatype* atomic_unit(const Window& win, const Place& place, const Datatype& type) {
  if (!win.atomic_accumulates || !place.local()) return nullptr;
  const Datatype* unit = type.layout->unit;
  if (unit == nullptr || unit != type.layout->basic) return nullptr;  // pairs, mixed types
  const TypeCode code = unit->layout->code;
  const bool fits = integer(code) || code == TypeCode::float_ || code == TypeCode::double_;
  const std::size_t size = unit->size();
  if (!fits || (size != 1 && size != 2 && size != 4 && size != 8)) return nullptr;
  return unit;
}

// The integer operations x86 and ARM do in one instruction, the previous value to `old` unless it
// is null: then the form that returns nothing runs (a locked xor rather than a compare-and-swap
// loop; a large accumulate is millions of them). False for the other operations.
template <class U>
bool one_instruction(U* word, U value, OpKind kind, U* old) {
  switch (kind) {
    case OpKind::sum:
      if (old == nullptr)
        __atomic_add_fetch(word, value, __ATOMIC_ACQ_REL);
      else
        *old = __atomic_fetch_add(word, value, __ATOMIC_ACQ_REL);
      return true;
    case OpKind::band:
      if (old == nullptr)
        __atomic_and_fetch(word, value, __ATOMIC_ACQ_REL);
      else
        *old = __atomic_fetch_and(word, value, __ATOMIC_ACQ_REL);
      return true;
    case OpKind::bor:
      if (old == nullptr)
        __atomic_or_fetch(word, value, __ATOMIC_ACQ_REL);
      else
        *old = __atomic_fetch_or(word, value, __ATOMIC_ACQ_REL);
      return true;
    case OpKind::bxor:
      if (old == nullptr)
        __atomic_xor_fetch(word, value, __ATOMIC_ACQ_REL);
      else
        *old = __atomic_fetch_xor(word, value, __ATOMIC_ACQ_REL);
      return true;
    default:
      return false;
  }
}

// One element: *element = *operand op *element, the old value to `result` (when not null).
// The __atomic builtins accept the unaligned elements a window may hold, unlike std::atomic_ref.
template <class U>
void update(std::byte* element, const std::byte* operand, std::byte* result, MPI_Op op,
            const Datatype& unit) {
  U* word = reinterpret_cast<U*>(element);
  U old{};
  if (op->kind == OpKind::no_op) {
    old = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  } else {
    U value;
    std::memcpy(&value, operand, sizeof value);
    if (op->kind == OpKind::replace) {
      old = __atomic_exchange_n(word, value, __ATOMIC_ACQ_REL);
    } else if (!integer(unit.layout->code) ||
               !one_instruction(word, value, op->kind, result != nullptr ? &old : nullptr)) {
      old = __atomic_load_n(word, __ATOMIC_RELAXED);
      U desired;
      do {
        desired = old;
        apply(op, &value, &desired, 1, const_cast<Datatype*>(&unit));
      } while (!__atomic_compare_exchange_n(word, &old, desired, true, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED));
    }
  }
  if (result != nullptr) std::memcpy(result, &old, sizeof old);
}

void update_element(std::size_t size, std::byte* element, const std::byte* operand,
                    std::byte* result, MPI_Op op, const Datatype& unit) {
  switch (size) {
    case 1:
      return update<std::uint8_t>(element, operand, result, op, unit);
    case 2:
      return update<std::uint16_t>(element, operand, result, op, unit);
    case 4:
      return update<std::uint32_t>(element, operand, result, op, unit);
    default:
      return update<std::uint64_t>(element, operand, result, op, unit);
  }
}

// The target's accumulate locks covering the target-side bytes an operation touches, held for
// the operation's life.
class StripeLocks {
 public:
  StripeLocks(Window& win, int target, const Place& place, std::size_t count, const Datatype& type)
      : control_(win.control), target_(target) {
    for_each_block(count, type, [&](MPI_Aint offset, std::size_t length) {
      const std::uintptr_t first = (place.address + offset) / Control::kStripeBytes;
      const std::uintptr_t last = (place.address + offset + length - 1) / Control::kStripeBytes;
      for (std::uintptr_t s = first; s <= last && mask_ != ~0u; ++s) {
        mask_ |= 1u << (s % Control::kStripes);
      }
    });
    for (int s = 0; s < Control::kStripes; ++s) {
      if ((mask_ >> s & 1u) == 0) continue;
      std::atomic_ref<std::uint32_t> word = control_.stripe(target_, s);
      // acquire: the holder's writes to the stripe's elements are visible once it is ours.
      for (std::uint32_t free = 0; !word.compare_exchange_weak(free, 1, std::memory_order_acquire,
                                                               std::memory_order_relaxed);
           free = 0) {
        after_failed_test();
      }
    }
  }
  ~StripeLocks() {
    for (int s = 0; s < Control::kStripes; ++s) {
      // release: publishes this operation's writes to the next holder.
      if ((mask_ >> s & 1u) != 0) control_.stripe(target_, s).store(0, std::memory_order_release);
    }
  }
  StripeLocks(const StripeLocks&) = delete;
  StripeLocks& operator=(const StripeLocks&) = delete;

 private:
  Control& control_;
  int target_;
  std::uint32_t mask_ = 0;
};

// The operand laid out as `count` elements of `type` (what apply() takes), in a buffer
// covering their span.
class Typed {
 public:
  Typed(std::size_t count, const Datatype& type) : span_(span_of(count, type)) {
    bytes_.resize(static_cast<std::size_t>(span_.hi - span_.lo));
  }
  void* data() { return bytes_.data() - span_.lo; }

 private:
  Span span_;
  std::vector<std::byte> bytes_;
};

}  // namespace

std::string accumulate(Window& win, int target, const Place& place, std::size_t count,
                       const Datatype& type, MPI_Op op, const std::byte* operand,
                       std::byte* result) {
  const std::size_t bytes = count * type.size();
  if (bytes == 0) return {};
  const Datatype* unit = atomic_unit(win, place, type);
  if (unit != nullptr && bytes == unit->size()) {
    update_element(bytes, place.direct + type.true_lb(), operand, result, op, *unit);
    return {};
  }
  // Several elements: one operation under the stripe locks, so that it is atomic as a whole
  // with respect to the other multi-element ones (programs rely on that for a pair of words
  // updated as MPI_BYTEs, as MPICH and Open MPI give it), each element still updated by an
  // atomic instruction against the single-element operations that take no lock.
  StripeLocks locks(win, target, place, count, type);
  if (unit != nullptr) {
    const std::size_t size = unit->size();
    std::size_t done = 0;
    for_each_block(count, type, [&](MPI_Aint offset, std::size_t length) {
      for (std::size_t i = 0; i < length; i += size, done += size) {
        update_element(size, place.direct + offset + i, operand + done,
                       result != nullptr ? result + done : nullptr, op, *unit);
      }
    });
    return {};
  }
  Typed in(count, type);
  if (op->kind != OpKind::no_op) unpack(operand, bytes, in.data(), count, type);
  MPI_Datatype handle = const_cast<Datatype*>(&type);
  if (place.local()) {
    if (result != nullptr) pack(place.direct, count, type, result);
    apply(op, in.data(), place.direct, count, handle);
    return {};
  }
  // Across processes: the target's elements come here, are updated and go back.
  std::vector<std::byte> old(bytes);
  if (std::string error = get(old.data(), bytes, *MPI_BYTE, place, count, type); !error.empty()) {
    return error;
  }
  if (result != nullptr) std::memcpy(result, old.data(), bytes);
  if (op->kind == OpKind::no_op) return {};
  Typed current(count, type);
  unpack(old.data(), bytes, current.data(), count, type);
  apply(op, in.data(), current.data(), count, handle);
  return put(current.data(), count, type, place, count, type);
}

std::string compare_and_swap(Window& win, int target, const Place& place, const Datatype& type,
                             const void* compare, const void* origin, void* result) {
  const std::size_t size = type.size();
  if (atomic_unit(win, place, type) != nullptr) {
    auto swap = [&](auto word) {
      using U = std::remove_pointer_t<decltype(word)>;
      U expected, desired;
      std::memcpy(&expected, compare, size);
      std::memcpy(&desired, origin, size);
      __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE);
      std::memcpy(result, &expected, size);  // the old value, whether or not it matched
    };
    switch (size) {
      case 1:
        swap(reinterpret_cast<std::uint8_t*>(place.direct));
        break;
      case 2:
        swap(reinterpret_cast<std::uint16_t*>(place.direct));
        break;
      case 4:
        swap(reinterpret_cast<std::uint32_t*>(place.direct));
        break;
      default:
        swap(reinterpret_cast<std::uint64_t*>(place.direct));
        break;
    }
    return {};
  }
  StripeLocks locks(win, target, place, 1, type);
  std::vector<std::byte> old(size);
  if (place.local()) {
    std::memcpy(old.data(), place.direct + type.true_lb(), size);
    if (std::memcmp(old.data(), compare, size) == 0) {
      std::memcpy(place.direct + type.true_lb(), origin, size);
    }
  } else {
    const std::uintptr_t address = place.address + static_cast<std::uintptr_t>(type.true_lb());
    if (std::string error = read_remote(place.pid, address, old.data(), size); !error.empty()) {
      return error;
    }
    if (std::memcmp(old.data(), compare, size) == 0) {
      if (std::string error = write_remote(place.pid, address, origin, size); !error.empty()) {
        return error;
      }
    }
  }
  std::memcpy(result, old.data(), size);
  return {};
}

}  // namespace weft::mpi::rma
