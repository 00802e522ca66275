// Thread snapshots and backtraces of parked user threads.
//
// A parked thread's registers are where Boost.Context's jump_fcontext left them, on its own stack
// at fiber->context. libunwind then walks the stack from those registers with the objects'
// DWARF call-frame tables, so frames compiled without frame pointers unwind too. libunwind is
// loaded with dlopen, privately (RTLD_LOCAL), on the first dump: linked in, its own
// _Unwind_RaiseException would replace libgcc's for every C++ exception of the process.
//
// A thread may be woken while its stack is read. Its park word is read before and after: when it
// changed, the frames are dropped (the thread ran; what was read may be half of two stacks).
#define UNW_LOCAL_ONLY
#include "weft/thread_dump.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <libunwind.h>
#include <ucontext.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "current.h"
#include "fiber.h"
#include "kernel_thread_rank.h"
#include "park.h"
#include "sanitizer.h"
#include "scheduler_impl.h"
#include "virtual_processor.h"

namespace weft {

namespace {

// The few libunwind calls a dump makes, found in the privately loaded library.
struct Unwinder {
  int (*init_local)(unw_cursor_t*, unw_context_t*) = nullptr;
  int (*step)(unw_cursor_t*) = nullptr;
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*) = nullptr;
  int (*get_proc_name)(unw_cursor_t*, char*, std::size_t, unw_word_t*) = nullptr;
  bool loaded() const { return init_local != nullptr; }
};

const Unwinder& unwinder() {
  static const Unwinder loaded = [] {
    Unwinder u;
    void* library = ::dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return u;
    u.step = reinterpret_cast<decltype(u.step)>(::dlsym(library, "_ULx86_64_step"));
    u.get_reg = reinterpret_cast<decltype(u.get_reg)>(::dlsym(library, "_ULx86_64_get_reg"));
    u.get_proc_name =
        reinterpret_cast<decltype(u.get_proc_name)>(::dlsym(library, "_ULx86_64_get_proc_name"));
    auto init = reinterpret_cast<decltype(u.init_local)>(::dlsym(library, "_ULx86_64_init_local"));
    if (u.step != nullptr && u.get_reg != nullptr && u.get_proc_name != nullptr) {
      u.init_local = init;
    }
    return u;
  }();
  return loaded;
}

std::string hex(std::uintptr_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%lx", static_cast<unsigned long>(value));
  return text;
}

std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> plain(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && plain != nullptr ? std::string(plain.get()) : std::string(name);
}

// Names of code addresses found during one snapshot: the threads of a job park in few places,
// and looking a name up in an object's symbol table is what a dump spends its time on. Not kept
// longer: a rank image unloaded and another loaded at its address would inherit its names.
using FrameNames = std::unordered_map<std::uintptr_t, std::string>;

// "function+0x1f (object)" for a code address.
std::string describe_frame(unw_cursor_t& cursor, std::uintptr_t pc) {
  char name[512];
  unw_word_t offset = 0;
  std::string text;
  if (unwinder().get_proc_name(&cursor, name, sizeof(name), &offset) == 0) {
    text = demangled(name) + "+" + hex(offset);
  }
  Dl_info where = {};
  if (::dladdr(reinterpret_cast<void*>(pc), &where) != 0) {
    if (text.empty() && where.dli_sname != nullptr) {
      text = demangled(where.dli_sname) + "+" +
             hex(pc - reinterpret_cast<std::uintptr_t>(where.dli_saddr));
    }
    if (where.dli_fname != nullptr) {
      const char* base = std::strrchr(where.dli_fname, '/');
      text += std::string(text.empty() ? "" : " ") + "(" +
              (base != nullptr ? base + 1 : where.dli_fname) + "+" +
              hex(pc - reinterpret_cast<std::uintptr_t>(where.dli_fbase)) + ")";
    }
  }
  return text.empty() ? hex(pc) : text;
}

// The frames of a switched-out thread, from the registers jump_fcontext saved at `context`.
std::vector<std::string> unwind(const void* context, FrameNames& names) {
  std::vector<std::string> frames;
#if defined(__x86_64__)
  const Unwinder& u = unwinder();
  if (!u.loaded() || context == nullptr) return frames;
  // jump_fcontext's frame (Boost.Context 1.74, x86-64 System V): MXCSR and x87 control word,
  // r12, r13, r14, r15, rbx, rbp, then the return address into the thread's code.
  const auto* saved = static_cast<const std::uint64_t*>(context);
  unw_context_t registers;
  std::memset(&registers, 0, sizeof(registers));
  greg_t* g = registers.uc_mcontext.gregs;
  g[REG_R12] = static_cast<greg_t>(saved[1]);
  g[REG_R13] = static_cast<greg_t>(saved[2]);
  g[REG_R14] = static_cast<greg_t>(saved[3]);
  g[REG_R15] = static_cast<greg_t>(saved[4]);
  g[REG_RBX] = static_cast<greg_t>(saved[5]);
  g[REG_RBP] = static_cast<greg_t>(saved[6]);
  g[REG_RIP] = static_cast<greg_t>(saved[7]);
  g[REG_RSP] = static_cast<greg_t>(reinterpret_cast<std::uintptr_t>(saved + 8));
  unw_cursor_t cursor;
  if (u.init_local(&cursor, &registers) != 0) return frames;
  constexpr int kMaxFrames = 64;
  for (int depth = 0; depth < kMaxFrames; ++depth) {
    unw_word_t pc = 0;
    if (u.get_reg(&cursor, UNW_REG_IP, &pc) != 0 || pc == 0) break;
    const auto address = static_cast<std::uintptr_t>(pc);
    auto known = names.find(address);
    if (known == names.end()) known = names.emplace(address, describe_frame(cursor, address)).first;
    frames.push_back(known->second);
    if (u.step(&cursor) <= 0) break;
  }
#else
  (void)context;
  (void)names;
#endif
  return frames;
}

}  // namespace

const char* to_string(ThreadSnapshot::State state) {
  switch (state) {
    case ThreadSnapshot::State::running:
      return "running";
    case ThreadSnapshot::State::runnable:
      return "runnable";
    case ThreadSnapshot::State::switching:
      return "switching";
    case ThreadSnapshot::State::parked:
      return "parked";
  }
  return "?";
}

std::vector<ThreadSnapshot> snapshot_threads(bool backtraces) {
  std::vector<ThreadSnapshot> threads;
  Scheduler::Impl* impl = detail::running_scheduler();
  if (impl == nullptr) return threads;
  // The fibers ever made: all_fibers only grows, under pool_lock, and fibers are never freed
  // before the scheduler, so the list copied under the lock stays readable.
  std::vector<detail::Fiber*> fibers;
  impl->pool_lock.lock();
  fibers.reserve(impl->all_fibers.size());
  for (const auto& fiber : impl->all_fibers) fibers.push_back(fiber.get());
  impl->pool_lock.unlock();
  FrameNames names;
  for (detail::Fiber* fiber : fibers) {
    // acquire: pairs with new_fiber's release, so id, type and rank are the new thread's.
    if (!fiber->live.load(std::memory_order_acquire)) continue;
    ThreadSnapshot t;
    t.handle = fiber;
    // relaxed atomics: the fiber may be recycled for a new thread meanwhile (new_fiber).
    t.id = std::atomic_ref(fiber->id).load(std::memory_order_relaxed);
    t.type = std::atomic_ref(fiber->type).load(std::memory_order_relaxed);
    t.rank = std::atomic_ref(fiber->rank).load(std::memory_order_relaxed);
    t.placement.kind = std::atomic_ref(fiber->placement.kind).load(std::memory_order_relaxed);
    t.placement.index = std::atomic_ref(fiber->placement.index).load(std::memory_order_relaxed);
    t.vp = fiber->vp.load(std::memory_order_relaxed);
    // acquire: pairs with finish_switch's, so a `parked` word comes with its saved context.
    const std::uint64_t word = fiber->park.load(std::memory_order_acquire);
    t.park_epoch = detail::park_epoch(word);
    switch (detail::park_state(word)) {
      case detail::ParkState::parked:
        t.state = ThreadSnapshot::State::parked;
        break;
      case detail::ParkState::parking:
      case detail::ParkState::pending:
        t.state = ThreadSnapshot::State::switching;
        break;
      case detail::ParkState::running:
        // In a run queue, or on its processor (a processor's current thread is not read: it
        // changes at every switch, unsynchronized). A woken thread still in a processor's
        // inbox counts as running.
        t.state = fiber->queue.load(std::memory_order_relaxed) != nullptr
                      ? ThreadSnapshot::State::runnable
                      : ThreadSnapshot::State::running;
        break;
    }
    if (t.vp >= 0 && t.vp < static_cast<int>(impl->vps.size())) {
      t.core = impl->vps[static_cast<std::size_t>(t.vp)]->core();
    }
    const void* note = fiber->wait_note.load(std::memory_order_relaxed);
    std::vector<std::string> frames;
    if (backtraces && t.state != ThreadSnapshot::State::running &&
        t.state != ThreadSnapshot::State::switching) {
      frames = unwind(fiber->context, names);
    }
    // acquire: the reads above happened before this one; an unchanged word means the thread
    // did not run meanwhile, so its note and stack were what they were at the first read.
    const bool stable = fiber->park.load(std::memory_order_acquire) == word;
    if (stable && t.state == ThreadSnapshot::State::parked) t.wait_note = note;
    if (t.state != ThreadSnapshot::State::parked) t.running_note = note;
    if (stable) t.backtrace = std::move(frames);
    threads.push_back(std::move(t));
  }
  return threads;
}

bool still_parked(const ThreadSnapshot& thread) {
  const auto* fiber = static_cast<const detail::Fiber*>(thread.handle);
  const std::uint64_t word = fiber->park.load(std::memory_order_acquire);
  return fiber->live.load(std::memory_order_relaxed) &&
         word == detail::park_word(thread.park_epoch, detail::ParkState::parked);
}

bool still_noted(const ThreadSnapshot& thread) {
  const auto* fiber = static_cast<const detail::Fiber*>(thread.handle);
  // acquire: what the note holds was written before the note was set.
  return thread.running_note != nullptr && fiber->live.load(std::memory_order_relaxed) &&
         fiber->wait_note.load(std::memory_order_acquire) == thread.running_note;
}

bool copy_note(const ThreadSnapshot& thread, const void* note, void* out, std::size_t size) {
  if (note == nullptr) return false;
  {
    [[maybe_unused]] const detail::sanitizer::IgnoreReads racy_by_design;
    std::memcpy(out, note, size);
  }
  return note == thread.wait_note ? still_parked(thread) : still_noted(thread);
}

int rank_kernel_threads() {
  return detail::live_rank_kernel_threads();
}

bool timers_pending() {
  Scheduler::Impl* impl = detail::running_scheduler();
  if (impl == nullptr) return false;
  for (const auto& vp : impl->vps) {
    if (vp->timers().next_deadline() != detail::TimerHeap::kNever) return true;
  }
  return false;
}

std::string format_threads(
    const std::vector<ThreadSnapshot>& threads,
    const std::function<std::string(const ThreadSnapshot& thread)>& describe_note) {
  std::string out;
  for (const ThreadSnapshot& t : threads) {
    out += "thread " + std::to_string(t.id) + " (" + std::string(to_string(t.type));
    if (t.rank >= 0) out += ", rank " + std::to_string(t.rank);
    out += ") " + std::string(to_string(t.state));
    if (t.core >= 0) {
      out += std::string(t.state == ThreadSnapshot::State::running ? " on" : ", last on") +
             " core " + std::to_string(t.core) + " (vp " + std::to_string(t.vp) + ")";
    }
    out += "\n";
    if ((t.wait_note != nullptr || t.running_note != nullptr) && describe_note) {
      const std::string what = describe_note(t);
      if (!what.empty()) out += "  waits in " + what + "\n";
    }
    for (std::size_t i = 0; i < t.backtrace.size(); ++i) {
      out += "  #" + std::to_string(i) + " " + t.backtrace[i] + "\n";
    }
    if (t.backtrace.empty() && t.state != ThreadSnapshot::State::running) {
      out += "  (no backtrace: the thread ran while its stack was read)\n";
    }
  }
  return out;
}

namespace this_thread {
const void* set_wait_note(const void* note) noexcept {
  detail::Fiber* self = detail::current_fiber();
  if (self == nullptr) return nullptr;
  // Only the thread itself writes its note: a load and a store, no read-modify-write.
  const void* previous = self->wait_note.load(std::memory_order_relaxed);
  // release: a reader of a thread that yields in its wait, not parked, loads the note with
  // acquire (still_noted) and then sees the record written before it (a plain store on x86).
  self->wait_note.store(note, std::memory_order_release);
  return previous;
}
}  // namespace this_thread

}  // namespace weft
