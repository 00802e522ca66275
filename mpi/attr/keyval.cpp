// The process-wide keyval registry.
#include "attr/keyval.h"

#include <mutex>
#include <unordered_map>

#include "weft/detail/spin_lock.h"

namespace weft::mpi::keyvals {

namespace {

struct Entry {
  Keyval keyval;
  bool freed = false;
  int attached = 0;  // attributes set with it, on any object and rank
};

// Any rank may create, free or use a keyval at any time; critical sections are a map operation
// and never run a callback, so a spin lock suffices.
struct Registry {
  weft::detail::SpinLock lock;
  std::unordered_map<int, Entry> entries;
  int next = kFirstUserKeyval;
};

// Never destroyed: the predefined communicators are static objects whose attribute sets detach
// their keyvals when they are destroyed at exit, in no order relative to this.
Registry& registry() {
  static Registry* const instance = new Registry;
  return *instance;
}

}  // namespace

int create(const Keyval& keyval) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const int id = r.next++;
  r.entries.emplace(id, Entry{keyval});
  return id;
}

std::optional<Keyval> live(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const auto it = r.entries.find(id);
  if (it == r.entries.end() || it->second.freed) return std::nullopt;
  return it->second.keyval;
}

Keyval attached(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  return r.entries.at(id).keyval;
}

bool free(int id, ObjectKind kind) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const auto it = r.entries.find(id);
  if (it == r.entries.end() || it->second.keyval.kind() != kind) return false;
  // Freed already but kept for an attribute: the handle is still valid, as in MPICH, and
  // freeing it again changes nothing (MPICH's attr/keyval_double_free frees it three times).
  if (it->second.freed) return true;
  if (it->second.attached == 0) {
    r.entries.erase(it);
  } else {
    it->second.freed = true;
  }
  return true;
}

void attach(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  ++r.entries.at(id).attached;
}

void detach(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const auto it = r.entries.find(id);
  if (--it->second.attached == 0 && it->second.freed) r.entries.erase(it);
}

}  // namespace weft::mpi::keyvals
