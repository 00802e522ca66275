// AttributeSet and the attribute operations shared by every kind of object.
#include "attr/attribute_set.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <variant>

namespace weft::mpi {

AttributeSet::AttributeSet(AttributeSet&& other) noexcept : entries_(std::move(other.entries_)) {}

AttributeSet::~AttributeSet() {
  for (const Entry& entry : entries_) keyvals::detach(entry.keyval);
}

bool AttributeSet::empty() const {
  std::lock_guard guard(lock_);
  return entries_.empty();
}

std::vector<AttributeSet::Entry> AttributeSet::entries() const {
  std::lock_guard guard(lock_);
  return entries_;
}

bool AttributeSet::find(int keyval, void** value, AttributeLanguage reader) const {
  std::lock_guard guard(lock_);
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [keyval](const Entry& e) { return e.keyval == keyval; });
  if (it == entries_.end()) return false;
  *value =
      reader == AttributeLanguage::c && it->fortran_value ? it->fortran_value.get() : it->value;
  return true;
}

void AttributeSet::put(int keyval, void* value, AttributeLanguage writer) {
  std::shared_ptr<MPI_Aint> fortran_value;
  if (writer == AttributeLanguage::fortran) {
    fortran_value = std::make_shared<MPI_Aint>(reinterpret_cast<MPI_Aint>(value));
  }
  {
    std::lock_guard guard(lock_);
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [keyval](const Entry& e) { return e.keyval == keyval; });
    if (it != entries_.end()) {
      it->value = value;
      it->fortran_value = std::move(fortran_value);
      return;
    }
    entries_.push_back({keyval, value, std::move(fortran_value)});
  }
  keyvals::attach(keyval);
}

bool AttributeSet::erase(int keyval) {
  {
    std::lock_guard guard(lock_);
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [keyval](const Entry& e) { return e.keyval == keyval; });
    if (it == entries_.end()) return false;
    entries_.erase(it);
  }
  keyvals::detach(keyval);
  return true;
}

namespace {

template <class Handle>
std::string keyval_text(int keyval) {
  return std::string(AttributeTraits<Handle>::keyval_argument) + " = " + std::to_string(keyval);
}

template <class Handle>
Outcome callback_failure(std::string_view callback, int keyval, int code) {
  return {code, "the " + std::string(callback) + " callback of keyval " + std::to_string(keyval) +
                    " returned " + std::to_string(code) + ", expected MPI_SUCCESS"};
}

// A keyval that set, get and delete may name: made by this kind's create call and live.
template <class Handle>
Outcome check_keyval(int keyval) {
  using Traits = AttributeTraits<Handle>;
  const std::string expected =
      ", expected a keyval made by " + std::string(Traits::create_call) + " and not freed";
  if (is_reserved_keyval(keyval)) {
    return {MPI_ERR_KEYVAL, keyval_text<Handle>(keyval) +
                                ", a predefined attribute, which is read-only" + expected};
  }
  const std::optional<Keyval> k = keyvals::live(keyval);
  if (!k) return {MPI_ERR_KEYVAL, keyval_text<Handle>(keyval) + expected};
  if (k->kind() != Traits::kind) {
    return {MPI_ERR_KEYVAL,
            keyval_text<Handle>(keyval) + ", a keyval of another kind of object" + expected};
  }
  return {};
}

// Runs the delete callback of `keyval`, set on `object` with `value`.
template <class Handle>
Outcome run_delete_callback(Handle object, int keyval, void* value) {
  const Keyval k = keyvals::attached(keyval);
  const auto& callbacks = std::get<Callbacks<Handle>>(k.callbacks);
  if (callbacks.remove == nullptr) return {};
  if (int rc = callbacks.remove(object, keyval, value, k.extra_state); rc != MPI_SUCCESS) {
    return callback_failure<Handle>("delete", keyval, rc);
  }
  return {};
}

// The same, and removes it from `set` unless the callback fails.
template <class Handle>
Outcome delete_one(AttributeSet& set, Handle object, int keyval, void* value) {
  if (Outcome o = run_delete_callback(object, keyval, value); !o.ok()) return o;
  set.erase(keyval);
  return {};
}

}  // namespace

template <class Handle>
Outcome create_keyval(typename AttributeTraits<Handle>::Copy* copy,
                      typename AttributeTraits<Handle>::Delete* remove, int* keyval,
                      void* extra_state) {
  if (keyval == nullptr) {
    return {MPI_ERR_ARG, std::string(AttributeTraits<Handle>::keyval_argument) +
                             " = NULL, expected where to store the keyval"};
  }
  *keyval = keyvals::create({Callbacks<Handle>{copy, remove}, extra_state});
  return {};
}

template <class Handle>
Outcome free_keyval(int* keyval) {
  using Traits = AttributeTraits<Handle>;
  if (keyval == nullptr) {
    return {MPI_ERR_ARG,
            std::string(Traits::keyval_argument) + " = NULL, expected the address of a keyval"};
  }
  if (is_reserved_keyval(*keyval)) {
    return {MPI_ERR_KEYVAL, keyval_text<Handle>(*keyval) +
                                ", a predefined keyval, expected one made by " +
                                std::string(Traits::create_call)};
  }
  if (!keyvals::free(*keyval, Traits::kind)) {
    return {MPI_ERR_KEYVAL, keyval_text<Handle>(*keyval) + ", expected a keyval made by " +
                                std::string(Traits::create_call) + " and not freed yet"};
  }
  *keyval = MPI_KEYVAL_INVALID;
  return {};
}

template <class Handle>
Outcome set_attribute(AttributeSet& set, Handle object, int keyval, void* value,
                      AttributeLanguage writer) {
  if (Outcome o = check_keyval<Handle>(keyval); !o.ok()) return o;
  if (void* old = nullptr; set.find(keyval, &old, AttributeLanguage::fortran)) {
    if (Outcome o = run_delete_callback(object, keyval, old); !o.ok()) return o;
  }
  set.put(keyval, value, writer);
  return {};
}

template <class Handle>
Outcome get_attribute(const AttributeSet& set, int keyval, void* attribute_val, int* flag,
                      AttributeLanguage reader) {
  if (Outcome o = check_keyval<Handle>(keyval); !o.ok()) return o;
  if (attribute_val == nullptr || flag == nullptr) {
    return {MPI_ERR_ARG, std::string(attribute_val == nullptr ? "attribute_val" : "flag") +
                             " = NULL, expected where to store the result"};
  }
  void* value = nullptr;
  *flag = set.find(keyval, &value, reader);
  if (*flag) *static_cast<void**>(attribute_val) = value;
  return {};
}

template <class Handle>
Outcome delete_attribute(AttributeSet& set, Handle object, int keyval) {
  void* value = nullptr;
  if (!set.find(keyval, &value, AttributeLanguage::fortran)) return check_keyval<Handle>(keyval);
  return delete_one(set, object, keyval, value);
}

template <class Handle>
Outcome copy_attributes(const AttributeSet& from, Handle parent, AttributeSet& to, Handle child) {
  // A snapshot: a copy callback may set attributes on the parent.
  for (const AttributeSet::Entry& entry : from.entries()) {
    const Keyval k = keyvals::attached(entry.keyval);
    const auto& callbacks = std::get<Callbacks<Handle>>(k.callbacks);
    if (callbacks.copy == nullptr) continue;
    void* copy = nullptr;
    int flag = 0;
    if (int rc = callbacks.copy(parent, entry.keyval, k.extra_state, entry.value, &copy, &flag);
        rc != MPI_SUCCESS) {
      delete_attributes(to, child);
      return callback_failure<Handle>("copy", entry.keyval, rc);
    }
    if (flag != 0) {
      to.put(entry.keyval, copy,
             entry.fortran_value ? AttributeLanguage::fortran : AttributeLanguage::c);
    }
  }
  return {};
}

template <class Handle>
Outcome delete_attributes(AttributeSet& set, Handle object) {
  for (;;) {
    const std::vector<AttributeSet::Entry> entries = set.entries();
    if (entries.empty()) return {};
    const AttributeSet::Entry& newest = entries.back();
    if (Outcome o = delete_one(set, object, newest.keyval, newest.value); !o.ok()) return o;
  }
}

#define WEFT_MPI_ATTRIBUTE_KIND(Handle)                                                         \
  template Outcome create_keyval<Handle>(AttributeTraits<Handle>::Copy*,                        \
                                         AttributeTraits<Handle>::Delete*, int*, void*);        \
  template Outcome free_keyval<Handle>(int*);                                                   \
  template Outcome set_attribute<Handle>(AttributeSet&, Handle, int, void*, AttributeLanguage); \
  template Outcome get_attribute<Handle>(const AttributeSet&, int, void*, int*,                 \
                                         AttributeLanguage);                                    \
  template Outcome delete_attribute<Handle>(AttributeSet&, Handle, int);                        \
  template Outcome copy_attributes<Handle>(const AttributeSet&, Handle, AttributeSet&, Handle); \
  template Outcome delete_attributes<Handle>(AttributeSet&, Handle);

// Explicit instantiations for the three kinds (a macro: a list of declarations per kind).
WEFT_MPI_ATTRIBUTE_KIND(MPI_Comm)
WEFT_MPI_ATTRIBUTE_KIND(MPI_Datatype)
WEFT_MPI_ATTRIBUTE_KIND(MPI_Win)
#undef WEFT_MPI_ATTRIBUTE_KIND

}  // namespace weft::mpi
