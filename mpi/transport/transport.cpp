#include "transport/transport.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "init/fatal.h"
#include "init/world.h"
#include "request/completion.h"
#include "transport/nic_affinity.h"
#include "transport/peer_watch.h"
#include "transport/wire_header.h"
#include "weft/detail/spin_lock.h"
#include "weft/error.h"
#include "weft/io.h"
#include "weft/this_thread.h"
#include "weft/trace_message.h"

namespace weft::mpi {

namespace {

constexpr unsigned kMessageId = 1;
// MPI_Cancel of a send to another process: the request, and the receiving process's answer.
constexpr unsigned kCancelId = 2;
constexpr unsigned kCancelAnswerId = 3;
constexpr std::string_view kAddressKey = "weft.ucx.address";
// A worker that ranks progressed this recently counts as polled: the spare kernel thread does not
// block on it (its wake-ups would take the worker's lock from under the ranks' polls, and a woken
// kernel thread may wait for a core), and an idle core keeps polling it. A rank that waits or
// tests polls far more often; one that computes longer than this between MPI calls hands the
// worker back to blocking detection.
constexpr std::int64_t kRanksPollNs = 1'000'000;

struct CancelHeader {
  std::uint64_t key;     // the message's remote_message_key
  std::uint64_t token;   // the asking process's Cancel, given back in the answer
  std::int32_t dest;     // world rank whose queue holds the message
  std::int32_t process;  // the asking process
};

struct CancelAnswer {
  std::uint64_t token;
  std::int32_t withdrawn;
};

// A cancel waiting in the asking process for its answer.
struct Cancel {
  std::atomic<int> answer{-1};  // -1 until answered, then 0 or 1; release/acquire
};

std::string ucx_failure(std::string_view call, ucs_status_t status) {
  return "UCX " + std::string(call) + " failed: " + ucs_status_string(status);
}

void check(std::string_view call, ucs_status_t status) {
  if (status != UCS_OK) throw Error(ucx_failure(call, status));
}

// An arrival decode_wire_header refused: ends the job with the reason. Out of line, so that the
// message callback builds no string on its way.
[[noreturn, gnu::cold, gnu::noinline]] void refuse_arrival(const WireArrival& arrival,
                                                           int processes) {
  end_job("weft: " + wire_header_refusal(arrival, processes));
}

// A send or fetch to or from `process` failed with `status`: when its endpoint reports peer
// failures (Transport::Impl::endpoint), UCX failed the endpoint, and this ends the process for
// the loss of `process` (its error callback may come later). Returns otherwise, or while closing.
void lost_in_operation(Transport::Impl& impl, int process, ucs_status_t status);

// One send in flight: what its completion callback needs, and what UCX reads until then (the
// header: UCX 1.13 has no flag to copy it). Kept in the transport's pool between sends.
struct SendInFlight {
  Transport::Impl* impl;
  int process;
  Request* request;
  WireHeader header;
  std::unique_ptr<char[]> packed;  // a non-contiguous send's data, packed
};

// A rendezvous message queued in an engine: its data is still in the sending process.
struct RemoteMessage : weft_mpi_message {
  Transport* transport = nullptr;
  int process = -1;  // the sender's
  void* desc = nullptr;
  std::size_t wire_bytes = 0;
  bool fetched = false;
};

std::size_t deliver_remote(weft_mpi_message& message, void* buffer, std::size_t count,
                           const Datatype& type) {
  auto& remote = static_cast<RemoteMessage&>(message);
  remote.fetched = true;
  return remote.transport->receive_now(remote.process, remote.desc, remote.wire_bytes,
                                       message.envelope.bytes, buffer, count, type);
}

void deliver_remote_later(weft_mpi_message& message, void* buffer, std::size_t count,
                          const Datatype& type, std::function<void(std::size_t)> done) {
  auto& remote = static_cast<RemoteMessage&>(message);
  remote.fetched = true;
  remote.transport->receive(remote.process, remote.desc, remote.wire_bytes, message.envelope.bytes,
                            buffer, count, type, std::move(done));
}

void release_remote(weft_mpi_message& message) {
  auto* remote = static_cast<RemoteMessage*>(&message);
  if (!remote->fetched) remote->transport->discard(remote->desc);
  delete remote;
}

const PayloadOps kRemoteOps = {&deliver_remote, &release_remote, &deliver_remote_later};

// A receive of rendezvous data in flight.
struct Fetch {
  int process;  // the sender
  void* desc;
  std::size_t wire_bytes;
  std::size_t typed_bytes;  // of the message; the wire carries more for a synchronous send
  void* buffer;
  std::size_t count;
  const Datatype* type;
  std::function<void(std::size_t)> done;
  std::atomic<int>* in_flight = nullptr;
  Transport::Impl* impl = nullptr;
  // Where UCX writes: the receive buffer when it takes the message whole and contiguous, else a
  // staging copy unpacked at the end.
  std::unique_ptr<char[]> staging;
};

}  // namespace

struct Transport::Impl {
  Transport& self;
  World& world;
  // Larger messages go by UCX's rendezvous. UCX's own choice here is about 8 KiB, where a
  // rendezvous (a round trip of control messages, then a CMA read) costs 6 us more than copying
  // through the shared-memory FIFO: 3x the latency at 16 KiB.
  const std::size_t eager_limit;
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  NicAffinity nic;
  // By process.
  std::vector<std::string> addresses;
  std::vector<ucp_ep_h> endpoints;  // made on first use
  std::vector<std::uint64_t> next_sequence;
  std::vector<std::uint64_t> expected_sequence;
  // Arrivals ahead of their turn, by sending process and sequence.
  struct Held {
    WireHeader header;
    std::string data;      // an eager message's data
    void* desc = nullptr;  // a rendezvous message's descriptor
    std::size_t length = 0;
  };
  std::vector<std::map<std::uint64_t, Held>> early;
  // Rendezvous receives matched inside a message callback, started once progress returns (UCX
  // takes no new operation from inside its callbacks).
  std::vector<std::unique_ptr<Fetch>> deferred;
  // Cancel requests from other processes, answered once progress returns, for the same reason.
  std::vector<CancelHeader> cancels;
  // UCX runs serialized: every call is made under this lock.
  detail::SpinLock lock;
  // Records of sends in flight, given back when they complete: a send allocates nothing in the
  // steady state. Under lock.
  std::vector<std::unique_ptr<SendInFlight>> spare_sends;
  static constexpr std::size_t kMaxSpareSends = 256;
  // Sends and fetches UCX has not completed yet. Their completion comes from progress, which no
  // event descriptor announces: while there are some, the worker must be polled, not blocked on.
  std::atomic<int> in_flight{0};
  // How often ranks progressed the worker themselves (progress_for_rank), and when busy() last
  // saw that count move: the clock is read by the I/O manager's rare busy() calls, not by every
  // spin round of a waiting rank. relaxed: hints, as busy() says.
  std::atomic<std::uint64_t> rank_polls{0};
  std::atomic<std::uint64_t> rank_polls_seen{0};
  std::atomic<std::int64_t> rank_polls_moved_ns{0};
  // What the I/O manager blocks on: an epoll set of the worker's event descriptor and `kick`,
  // written when an operation goes in flight so that a manager blocked meanwhile re-arms, sees
  // it and polls instead.
  int kick = -1;
  // In the same set, a timer that expires every kWatchdogMs: a blocked manager re-arms and polls
  // at least that often. Without it, jobs spread over processes hung now and then with every
  // process blocked on an armed worker while one of them had UCX work pending that its event
  // descriptor never announced (waking that process's manager by hand let the job finish); the
  // missed event is not found (docs/mpi-processes.md, "Who progresses the worker").
  int watchdog = -1;
  int events = -1;
  std::optional<io::Source> source;
  // The peer processes, watched from the job's start to quiesce(); a peer lost meanwhile ends
  // this process (lost()).
  std::optional<PeerWatch> peers;
  // release/acquire: set by quiesce(), after which peers end as they should.
  std::atomic<bool> closing{false};

  Impl(Transport& transport, World& w, std::size_t eager)
      : self(transport), world(w), eager_limit(eager) {}

  // Holds `lock` for one stretch of UCX calls. Nothing may switch away from the calling thread
  // meanwhile (another thread of its core would spin on the lock for ever), so the system calls
  // UCX makes go straight to the kernel instead of parking it.
  class Serialized {
   public:
    explicit Serialized(Impl& impl) : impl_(impl) { impl.lock.lock(); }
    Serialized(Impl& impl, std::try_to_lock_t) : impl_(impl), owned_(impl.lock.try_lock()) {}
    ~Serialized() {
      if (owned_) impl_.lock.unlock();
    }
    Serialized(const Serialized&) = delete;
    Serialized& operator=(const Serialized&) = delete;
    bool owns() const { return owned_; }

   private:
    io::DirectCalls direct_;
    Impl& impl_;
    bool owned_ = true;
  };

  ucp_ep_h endpoint(int process);
  // Ends this process for the loss of peer `process`, telling the launcher (end_job_lost_process),
  // unless the job is closing, where peers end as they should: then it returns.
  void lost(int process, std::string_view why);
  static void on_endpoint_failure(void* arg, ucp_ep_h ep, ucs_status_t status);
  static ucs_log_func_rc_t on_ucx_log(const char* file, unsigned line, const char* function,
                                      ucs_log_level_t level,
                                      const ucs_log_component_config_t* component,
                                      const char* format, va_list ap);
  // Under lock: one more operation that only progress completes.
  void went_in_flight() {
    // relaxed: read by arm() under the same lock.
    in_flight.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t wrote = ::write(kick, &one, sizeof one);
  }
  // Under lock: a send record from the pool, and one given back.
  SendInFlight* take_send() {
    if (spare_sends.empty()) return new SendInFlight{this, -1, nullptr, {}, nullptr};
    SendInFlight* sent = spare_sends.back().release();
    spare_sends.pop_back();
    return sent;
  }
  void give_back(SendInFlight* sent) {
    sent->packed.reset();
    if (spare_sends.size() < kMaxSpareSends) {
      spare_sends.emplace_back(sent);
    } else {
      delete sent;
    }
  }
  // Under lock: `send` to `process` as UCX may queue it (a record from the pool and a completion
  // callback); returns ucp_am_send_nbx's answer.
  ucs_status_ptr_t send_queued(Request& send, ucp_ep_h ep, int process, const WireHeader& header,
                               const void* data, std::size_t wire_bytes, bool synchronous,
                               std::unique_ptr<char[]> packed);
  // UCX's completion of a send that went in flight, under lock (from progress; or from closing
  // the endpoints, at the end).
  static void on_send_done(void* ucx_request, ucs_status_t status, void* user_data);
  void start_fetch(std::unique_ptr<Fetch> fetch);
  void run_deferred();
  // Under lock: one ucp_worker_progress and what it deferred.
  unsigned progress_locked();
  void handle(const WireHeader& header, void* data, std::size_t length, bool rendezvous);
  // Under lock: withdraws what the cancels ask for and answers each.
  void answer_cancels();
  // Under lock: an active message of `header` only; UCX copies nothing, so the header lives on
  // the heap until the send completes.
  void send_control(int process, unsigned id, std::unique_ptr<char[]> header, std::size_t length);
  static ucs_status_t on_message(void* arg, const void* header, std::size_t header_length,
                                 void* data, std::size_t length, const ucp_am_recv_param_t* param);
};

ucp_ep_h Transport::Impl::endpoint(int process) {
  ucp_ep_h& ep = endpoints[static_cast<std::size_t>(process)];
  if (ep != nullptr) return ep;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  params.address =
      reinterpret_cast<const ucp_address_t*>(addresses[static_cast<std::size_t>(process)].data());
  // A peer on another machine is reached by transports that report its failure (tcp, the
  // InfiniBand ones): UCX then fails the endpoint and calls on_endpoint_failure instead of
  // aborting. On this machine UCX 1.13 would keep for such an endpoint only the transports that
  // can report one, tcp and cma, dropping shared memory (posix, sysv) for loopback TCP; there the
  // peer is watched through its pidfd instead (PeerWatch), and UCX's fatal CMA error is caught
  // (on_ucx_log).
  if (!peers->same_machine(process)) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &Impl::on_endpoint_failure;
    params.err_handler.arg = this;
  }
  check("ucp_ep_create (to process " + std::to_string(process) + ")",
        ucp_ep_create(worker, &params, &ep));
  return ep;
}

void Transport::Impl::lost(int process, std::string_view why) {
  if (closing.load(std::memory_order_acquire)) return;
  const RankLayout& layout = world.layout();
  end_job_lost_process(process, process_label(layout, world.process()) + ": lost " +
                                    process_label(layout, process) + ": " + std::string(why));
}

namespace {

void lost_in_operation(Transport::Impl& impl, int process, ucs_status_t status) {
  if (process >= 0 && !impl.peers->same_machine(process)) {
    impl.lost(process, std::string("UCX: ") + ucs_status_string(status));
  }
}

}  // namespace

void Transport::Impl::on_send_done(void* ucx_request, ucs_status_t status, void* user_data) {
  auto* sent = static_cast<SendInFlight*>(user_data);
  Impl& impl = *sent->impl;
  Request& request = *sent->request;
  // The receiver withdrew the rendezvous message for MPI_Cancel and released its descriptor
  // unread, which UCX 1.13 reports as UCS_OK (later ones as UCS_ERR_CANCELED); MPI_Cancel marks
  // the status when the answer comes.
  const bool fine = status == UCS_OK || status == UCS_ERR_CANCELED;
  if (!fine) lost_in_operation(impl, sent->process, status);
  request.status.MPI_ERROR = fine ? MPI_SUCCESS : MPI_ERR_OTHER;
  if (!fine) request.transport_failure = ucs_status_string(status);  // a static string
  ucp_request_free(ucx_request);
  // relaxed: a hint for arm(), which runs under the same lock as this callback.
  impl.in_flight.fetch_sub(1, std::memory_order_relaxed);
  impl.give_back(sent);
  finish(request);
}

void Transport::Impl::on_endpoint_failure(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto& impl = *static_cast<Impl*>(arg);
  // Called from progress, under the lock.
  const auto found = std::find(impl.endpoints.begin(), impl.endpoints.end(), ep);
  if (found == impl.endpoints.end()) return;
  impl.lost(static_cast<int>(found - impl.endpoints.begin()),
            std::string("UCX: ") + ucs_status_string(status));
}

namespace {

// The transport whose process watches its peers, for on_ucx_log.
std::atomic<Transport::Impl*> watching_transport{nullptr};

}  // namespace

// UCX 1.13 treats a failed CMA copy as fatal on an endpoint without error handling: it logs it
// at the fatal level, then aborts with a backtrace. One that failed because its peer is gone
// ("process_vm_readv(pid=<peer>...) returned -1: No such process") is the loss of that peer, and
// ends the process as one: a peer killed in the middle of a rendezvous reaches this before its
// pidfd is seen. Any other fatal error goes on to UCX's own report.
ucs_log_func_rc_t Transport::Impl::on_ucx_log(const char*, unsigned, const char*,
                                              ucs_log_level_t level,
                                              const ucs_log_component_config_t*, const char* format,
                                              va_list ap) {
  if (level != UCS_LOG_LEVEL_FATAL) return UCS_LOG_FUNC_RC_CONTINUE;
  Impl* impl = watching_transport.load(std::memory_order_acquire);
  if (impl == nullptr) return UCS_LOG_FUNC_RC_CONTINUE;
  char text[1024];
  std::vsnprintf(text, sizeof text, format, ap);
  const std::string_view message(text);
  const std::size_t pid_at = message.find("(pid=");
  if (pid_at == std::string_view::npos) return UCS_LOG_FUNC_RC_CONTINUE;
  const int process =
      impl->peers->process_of_pid(static_cast<pid_t>(std::strtol(text + pid_at + 5, nullptr, 10)));
  if (process < 0) return UCS_LOG_FUNC_RC_CONTINUE;
  const std::size_t reason_at = message.rfind(": ");
  std::string why = "UCX: " + std::string(message.substr(0, pid_at));
  if (reason_at != std::string_view::npos) why += std::string(message.substr(reason_at));
  impl->lost(process, why);
  return UCS_LOG_FUNC_RC_CONTINUE;
}

void Transport::Impl::start_fetch(std::unique_ptr<Fetch> fetch) {
  void* target = fetch->buffer;
  const std::size_t capacity = fetch->count * fetch->type->size();
  if (!fetch->type->contiguous() || capacity < fetch->wire_bytes) {
    fetch->staging.reset(new char[fetch->wire_bytes]);
    target = fetch->staging.get();
  } else {
    target = static_cast<char*>(fetch->buffer) + fetch->type->true_lb();
  }
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user_data) {
    std::unique_ptr<Fetch> done(static_cast<Fetch*>(user_data));
    if (request != nullptr) {
      ucp_request_free(request);
      done->in_flight->fetch_sub(1, std::memory_order_relaxed);
    }
    if (status != UCS_OK) {
      lost_in_operation(*done->impl, done->process, status);
      end_job(ucx_failure("rendezvous receive", status));
    }
    std::size_t moved = std::min(done->typed_bytes, done->count * done->type->size());
    if (done->staging != nullptr && done->typed_bytes > 0) {
      moved = copy(done->staging.get(), done->typed_bytes, weft_mpi_byte, done->buffer, done->count,
                   *done->type);
    }
    done->done(moved);
  };
  Fetch* raw = fetch.release();
  raw->in_flight = &in_flight;
  raw->impl = this;
  param.user_data = raw;
  ucs_status_ptr_t status =
      ucp_am_recv_data_nbx(worker, raw->desc, target, raw->wire_bytes, &param);
  if (UCS_PTR_IS_ERR(status)) {
    end_job(ucx_failure("ucp_am_recv_data_nbx", UCS_PTR_STATUS(status)));
  }
  if (status == nullptr) {
    param.cb.recv_am(nullptr, UCS_OK, raw->wire_bytes, raw);
  } else {
    went_in_flight();
  }
}

void Transport::Impl::run_deferred() {
  while (!deferred.empty()) {
    std::vector<std::unique_ptr<Fetch>> batch;
    batch.swap(deferred);
    for (auto& fetch : batch) start_fetch(std::move(fetch));
  }
}

unsigned Transport::Impl::progress_locked() {
  const unsigned events = ucp_worker_progress(worker);
  if (!deferred.empty()) run_deferred();
  if (!cancels.empty()) answer_cancels();
  return events;
}

void Transport::Impl::send_control(int process, unsigned id, std::unique_ptr<char[]> header,
                                   std::size_t length) {
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  param.cb.send = [](void* request, ucs_status_t status, void* user_data) {
    delete[] static_cast<char*>(user_data);
    if (request != nullptr) ucp_request_free(request);
    if (status != UCS_OK) end_job(ucx_failure("sending a cancel message", status));
  };
  char* raw = header.release();
  param.user_data = raw;
  ucs_status_ptr_t status = ucp_am_send_nbx(endpoint(process), id, raw, length, nullptr, 0, &param);
  if (UCS_PTR_IS_ERR(status)) end_job(ucx_failure("ucp_am_send_nbx", UCS_PTR_STATUS(status)));
  if (status == nullptr) delete[] raw;
}

void Transport::Impl::answer_cancels() {
  while (!cancels.empty()) {
    std::vector<CancelHeader> batch;
    batch.swap(cancels);
    for (const CancelHeader& asked : batch) {
      bool withdrawn = false;
      if (world.is_local(asked.dest)) {
        if (weft_mpi_message* message = world.rank(asked.dest).engine.withdraw(asked.key)) {
          withdrawn = true;
          if (message->ops == &kRemoteOps) {
            // Released unread: the sender's UCX send completes as cancelled. The lock is held
            // here, which release_remote would take again.
            ucp_am_data_release(worker, static_cast<RemoteMessage*>(message)->desc);
            delete static_cast<RemoteMessage*>(message);
          } else {
            message->release();
          }
        }
      }
      std::unique_ptr<char[]> answer(new char[sizeof(CancelAnswer)]);
      const CancelAnswer reply{asked.token, withdrawn ? 1 : 0};
      std::memcpy(answer.get(), &reply, sizeof reply);
      send_control(asked.process, kCancelAnswerId, std::move(answer), sizeof reply);
    }
  }
}

void Transport::Impl::handle(const WireHeader& header, void* data, std::size_t length,
                             bool rendezvous) {
  if (!world.is_local(header.dest)) {
    end_job("weft: a message from process " + std::to_string(header.process) +
            " names world rank " + std::to_string(header.dest) + ", which process " +
            std::to_string(world.process()) + " does not hold");
  }
  Engine& engine = world.rank(header.dest).engine;
  const Envelope envelope{header.context, header.source, header.tag, header.bytes};
  const std::uint64_t key = remote_message_key(header.process, header.sequence);
  if (!rendezvous) {
    engine.arrive_eager(envelope, data, key);
    return;
  }
  auto* message = new RemoteMessage;
  message->envelope = envelope;
  message->sender_key = key;
  message->ops = &kRemoteOps;
  message->transport = &self;
  message->process = header.process;
  message->desc = data;
  message->wire_bytes = length;
  engine.arrive(*message);
}

ucs_status_t Transport::Impl::on_message(void* arg, const void* header_bytes,
                                         std::size_t header_length, void* data, std::size_t length,
                                         const ucp_am_recv_param_t* param) {
  auto& impl = *static_cast<Impl*>(arg);
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  const WireArrival arrival{header_bytes, header_length, length, rendezvous};
  const int processes = impl.world.layout().processes();
  WireHeader header;
  if (decode_wire_header(arrival, processes, header) != WireFault::none) [[unlikely]]
    refuse_arrival(arrival, processes);
  const auto from = static_cast<std::size_t>(header.process);
  if (header.sequence != impl.expected_sequence[from]) {
    Held held{header, {}, nullptr, length};
    if (rendezvous) {
      held.desc = data;
    } else {
      held.data.assign(static_cast<const char*>(data), length);
    }
    impl.early[from].emplace(header.sequence, std::move(held));
    return rendezvous ? UCS_INPROGRESS : UCS_OK;
  }
  impl.handle(header, data, length, rendezvous);
  ++impl.expected_sequence[from];
  auto& waiting = impl.early[from];
  // Nearly always nothing waits: a look at the size, not a search of the tree.
  for (auto next = waiting.empty() ? waiting.end() : waiting.find(impl.expected_sequence[from]);
       next != waiting.end(); next = waiting.find(impl.expected_sequence[from])) {
    Held held = std::move(next->second);
    waiting.erase(next);
    impl.handle(held.header, held.desc != nullptr ? held.desc : held.data.data(), held.length,
                held.desc != nullptr);
    ++impl.expected_sequence[from];
  }
  // A rendezvous descriptor stays valid until fetched or discarded.
  return rendezvous ? UCS_INPROGRESS : UCS_OK;
}

Transport::Transport(World& world, Bootstrap& bootstrap, std::size_t eager_limit)
    : impl_(std::make_unique<Impl>(*this, world, eager_limit)) {
  Impl& impl = *impl_;
  trace::set_process(world.process());
  impl.peers.emplace(bootstrap);
  const auto processes = static_cast<std::size_t>(world.layout().processes());
  impl.endpoints.assign(processes, nullptr);
  impl.next_sequence.assign(processes, 0);
  impl.expected_sequence.assign(processes, 0);
  impl.early.resize(processes);

  std::optional<NicMemoryScope> near_nic;
  if (const Scheduler* scheduler = Scheduler::current()) {
    impl.nic = nic_affinity(*scheduler);
    near_nic.emplace(scheduler->topology(), impl.nic);
  }
  ucp_config_t* config = nullptr;
  check("ucp_config_read", ucp_config_read(nullptr, nullptr, &config));
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  const ucs_status_t status = ucp_init(&params, config, &impl.context);
  ucp_config_release(config);
  check("ucp_init", status);

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  check("ucp_worker_create", ucp_worker_create(impl.context, &worker_params, &impl.worker));
  near_nic.reset();

  ucp_am_handler_param_t handler{};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  handler.id = kMessageId;
  handler.cb = &Impl::on_message;
  handler.arg = &impl;
  handler.flags = UCP_AM_FLAG_WHOLE_MSG;
  check("ucp_worker_set_am_recv_handler", ucp_worker_set_am_recv_handler(impl.worker, &handler));
  handler.id = kCancelId;
  handler.cb = [](void* arg, const void* header, std::size_t length, void*, std::size_t,
                  const ucp_am_recv_param_t*) {
    auto& impl = *static_cast<Impl*>(arg);
    if (length != sizeof(CancelHeader)) end_job("weft: a cancel message of the wrong size came");
    CancelHeader asked;
    std::memcpy(&asked, header, sizeof asked);
    impl.cancels.push_back(asked);
    return UCS_OK;
  };
  check("ucp_worker_set_am_recv_handler", ucp_worker_set_am_recv_handler(impl.worker, &handler));
  handler.id = kCancelAnswerId;
  handler.cb = [](void*, const void* header, std::size_t length, void*, std::size_t,
                  const ucp_am_recv_param_t*) {
    if (length != sizeof(CancelAnswer)) end_job("weft: a cancel answer of the wrong size came");
    CancelAnswer answer;
    std::memcpy(&answer, header, sizeof answer);
    reinterpret_cast<Cancel*>(answer.token)
        ->answer.store(answer.withdrawn, std::memory_order_release);
    return UCS_OK;
  };
  check("ucp_worker_set_am_recv_handler", ucp_worker_set_am_recv_handler(impl.worker, &handler));

  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  check("ucp_worker_get_address", ucp_worker_get_address(impl.worker, &address, &length));
  bootstrap.put(kAddressKey, std::string_view(reinterpret_cast<const char*>(address), length));
  ucp_worker_release_address(impl.worker, address);
}

void Transport::connect(Bootstrap& bootstrap) {
  Impl& impl = *impl_;
  const int processes = impl.world.layout().processes();
  for (int p = 0; p < processes; ++p) impl.addresses.push_back(bootstrap.get(p, kAddressKey));
  impl.peers->start(bootstrap,
                    [&impl](int process) { impl.lost(process, "it ended before the job did"); });
  watching_transport.store(&impl, std::memory_order_release);
  ucs_log_push_handler(&Impl::on_ucx_log);

  int worker_fd = -1;
  check("ucp_worker_get_efd", ucp_worker_get_efd(impl.worker, &worker_fd));
  impl.kick = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  impl.watchdog = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  impl.events = ::epoll_create1(EPOLL_CLOEXEC);
  if (impl.kick < 0 || impl.watchdog < 0 || impl.events < 0) {
    throw Error(std::string("the UCX event set could not be made: ") + std::strerror(errno));
  }
  constexpr long kWatchdogMs = 20;
  itimerspec period{};
  period.it_interval.tv_nsec = kWatchdogMs * 1'000'000;
  period.it_value = period.it_interval;
  if (::timerfd_settime(impl.watchdog, 0, &period, nullptr) != 0) {
    throw Error(std::string("the UCX watchdog timer could not be set: ") + std::strerror(errno));
  }
  for (int fd : {worker_fd, impl.kick, impl.watchdog}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (::epoll_ctl(impl.events, EPOLL_CTL_ADD, fd, &event) != 0) {
      throw Error(std::string("epoll_ctl on the UCX event set failed: ") + std::strerror(errno));
    }
  }
  io::SourceSpec spec;
  spec.name = "UCX worker of process " + std::to_string(impl.world.process());
  spec.poll = [this] { return progress(); };
  spec.fd = impl.events;
  spec.events = POLLIN;
  spec.near_vps = impl.nic.near_vps;
  // relaxed: hints; a poll that finds them stale runs one progress for nothing, or blocks a
  // little later.
  spec.busy = [&impl] {
    if (impl.in_flight.load(std::memory_order_relaxed) != 0) return true;
    const std::int64_t now = monotonic_ns();
    const std::uint64_t polls = impl.rank_polls.load(std::memory_order_relaxed);
    if (polls != impl.rank_polls_seen.load(std::memory_order_relaxed)) {
      impl.rank_polls_seen.store(polls, std::memory_order_relaxed);
      impl.rank_polls_moved_ns.store(now, std::memory_order_relaxed);
      return true;
    }
    return now - impl.rank_polls_moved_ns.load(std::memory_order_relaxed) < kRanksPollNs;
  };
  // UCX arms only a worker that progress found idle: one progress call handles a bounded number
  // of events, and arming with more queued would sleep on messages already there.
  spec.arm = [&impl] {
    Impl::Serialized serialized(impl, std::try_to_lock);
    if (!serialized.owns()) return false;
    std::uint64_t kicks = 0;
    [[maybe_unused]] const ssize_t got = ::read(impl.kick, &kicks, sizeof kicks);
    [[maybe_unused]] const ssize_t expired = ::read(impl.watchdog, &kicks, sizeof kicks);
    return impl.in_flight.load(std::memory_order_relaxed) == 0 && impl.progress_locked() == 0 &&
           ucp_worker_arm(impl.worker) == UCS_OK;
  };
  impl.source.emplace(std::move(spec));
}

void Transport::quiesce() {
  Impl& impl = *impl_;
  impl.closing.store(true, std::memory_order_release);
  impl.peers->stop();
  impl.source.reset();
  Impl::Serialized serialized(impl);
  ucp_request_param_t param{};
  ucs_status_ptr_t flush = ucp_worker_flush_nbx(impl.worker, &param);
  if (UCS_PTR_IS_ERR(flush))
    throw Error(ucx_failure("ucp_worker_flush_nbx", UCS_PTR_STATUS(flush)));
  if (flush != nullptr) {
    while (ucp_request_check_status(flush) == UCS_INPROGRESS) impl.progress_locked();
    ucp_request_free(flush);
  }
}

Transport::~Transport() {
  Impl& impl = *impl_;
  impl.closing.store(true, std::memory_order_release);
  impl.peers->stop();
  impl.source.reset();
  if (watching_transport.load(std::memory_order_relaxed) == &impl) {
    ucs_log_pop_handler();
    watching_transport.store(nullptr, std::memory_order_release);
  }
  for (auto& held : impl.early) {
    for (auto& [sequence, message] : held) {
      if (message.desc != nullptr) ucp_am_data_release(impl.worker, message.desc);
    }
  }
  for (ucp_ep_h& ep : impl.endpoints) {
    if (ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t close = ucp_ep_close_nbx(ep, &param);
    if (close != nullptr && !UCS_PTR_IS_ERR(close)) {
      while (ucp_request_check_status(close) == UCS_INPROGRESS) ucp_worker_progress(impl.worker);
      ucp_request_free(close);
    }
  }
  ucp_worker_destroy(impl.worker);
  ucp_cleanup(impl.context);
  if (impl.events >= 0) ::close(impl.events);
  if (impl.kick >= 0) ::close(impl.kick);
  if (impl.watchdog >= 0) ::close(impl.watchdog);
}

std::string Transport::send(Request& send, int dest_world_rank, const Envelope& envelope,
                            std::uint64_t* queued_key) {
  Impl& impl = *impl_;
  const void* data = send.buffer;
  const Datatype& type = *send.datatype;
  std::unique_ptr<char[]> packed;
  if (envelope.bytes > 0 && !type.contiguous()) {
    packed.reset(new char[envelope.bytes]);
    pack(send.buffer, static_cast<std::size_t>(send.count), type, packed.get());
    data = packed.get();
  } else if (envelope.bytes > 0) {
    data = static_cast<const char*>(send.buffer) + type.true_lb();
  }
  // A synchronous send completes when the receiver fetches its data, which it does once a
  // receive matched: UCX's rendezvous gives exactly that, with one byte for an empty message.
  const bool synchronous = send.mode == SendMode::sync;
  static const char kEmpty = 0;
  std::size_t wire_bytes = envelope.bytes;
  if (synchronous && wire_bytes == 0) {
    data = &kEmpty;
    wire_bytes = 1;
  }
  const int process = impl.world.process_of(dest_world_rank);
  // A small eager message is first offered to UCX for immediate completion only: its short
  // protocol copies header and data into the peer's FIFO within the call, or says it cannot
  // (UCS_ERR_NO_RESOURCE: FIFO full, a message too long for it, an endpoint still connecting)
  // rather than queue it. A send that completes so needs no pooled record, no callback and no
  // heap copy of its header. Only a refusal takes the queued path below, which handles every
  // other status as it always did.
  const bool immediate = !synchronous && wire_bytes <= kImmediateBytes && packed == nullptr;
  ucs_status_ptr_t status;
  {
    Impl::Serialized serialized(impl);
    ucp_ep_h ep;
    try {
      ep = impl.endpoint(process);
    } catch (const Error& error) {
      return error.what();
    }
    std::uint64_t& sequence = impl.next_sequence[static_cast<std::size_t>(process)];
    const WireHeader header{sequence,     envelope.bytes,  envelope.context,    envelope.source,
                            envelope.tag, dest_world_rank, impl.world.process()};
    if (queued_key != nullptr) *queued_key = remote_message_key(header.process, header.sequence);
    if (trace::enabled(trace::Category::message)) [[unlikely]]
      trace::message_sent(trace::remote_message_id(header.process, process, header.sequence),
                          {send.peer, envelope.tag, envelope.bytes, envelope.context});
    bool refused = true;
    if (immediate) {
      ucp_request_param_t now{};
      now.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
      now.flags = UCP_AM_SEND_FLAG_EAGER;
      status = ucp_am_send_nbx(ep, kMessageId, &header, sizeof header, data, wire_bytes, &now);
      refused = UCS_PTR_IS_ERR(status) && UCS_PTR_STATUS(status) == UCS_ERR_NO_RESOURCE;
    }
    if (refused)
      status = impl.send_queued(send, ep, process, header, data, wire_bytes, synchronous,
                                std::move(packed));
    // A message UCX refused for good takes no sequence number: later ones must not wait for it
    // at the receiver (MPI_ERRORS_RETURN goes on after the refusal).
    if (!UCS_PTR_IS_ERR(status)) ++sequence;
  }
  if (UCS_PTR_IS_ERR(status)) {
    return ucx_failure("ucp_am_send_nbx (to process " + std::to_string(process) + ")",
                       UCS_PTR_STATUS(status));
  }
  if (status == nullptr) {
    send.status.MPI_ERROR = MPI_SUCCESS;
    finish(send);
  }
  return {};
}

bool Transport::send_now(int dest_world_rank, const Envelope& envelope, const void* data) {
  // A recorded message names its destination's comm rank, which send() has.
  if (trace::enabled(trace::Category::message)) [[unlikely]]
    return false;
  Impl& impl = *impl_;
  const int process = impl.world.process_of(dest_world_rank);
  ucp_request_param_t now{};
  now.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
  now.flags = UCP_AM_SEND_FLAG_EAGER;
  Impl::Serialized serialized(impl);
  // The first message to a process makes its endpoint, which may fail: send() says how.
  const ucp_ep_h ep = impl.endpoints[static_cast<std::size_t>(process)];
  if (ep == nullptr) return false;
  std::uint64_t& sequence = impl.next_sequence[static_cast<std::size_t>(process)];
  const WireHeader header{sequence,     envelope.bytes,  envelope.context,    envelope.source,
                          envelope.tag, dest_world_rank, impl.world.process()};
  // With UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL UCX completes the send within the call (UCS_OK) or
  // takes nothing (an error: UCS_ERR_NO_RESOURCE when it would have to queue it); a refused
  // message takes no sequence number, and send() offers it again.
  if (ucp_am_send_nbx(ep, kMessageId, &header, sizeof header, data, envelope.bytes, &now) !=
      nullptr) {
    return false;
  }
  ++sequence;
  return true;
}

ucs_status_ptr_t Transport::Impl::send_queued(Request& send, ucp_ep_h ep, int process,
                                              const WireHeader& header, const void* data,
                                              std::size_t wire_bytes, bool synchronous,
                                              std::unique_ptr<char[]> packed) {
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &Impl::on_send_done;
  param.flags =
      synchronous || wire_bytes > eager_limit ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER;
  SendInFlight* sent = take_send();
  sent->process = process;
  sent->request = &send;
  sent->packed = std::move(packed);
  sent->header = header;
  param.user_data = sent;
  const ucs_status_ptr_t status =
      ucp_am_send_nbx(ep, kMessageId, &sent->header, sizeof sent->header, data, wire_bytes, &param);
  if (status == nullptr || UCS_PTR_IS_ERR(status)) {
    // Done (an eager message UCX copied out at once) or refused: UCX keeps nothing of it.
    give_back(sent);
  } else {
    went_in_flight();
    progress_locked();
  }
  return status;
}

bool Transport::progress_for_rank() {
  // relaxed, a load and a store: a hint for the source's busy(), which only asks whether the
  // count moved since it last looked. Moved once per look, not at every poll, so that ranks
  // polling on several cores do not pass the line around; ranks polling at once may lose an
  // increment, not the move.
  Impl& impl = *impl_;
  const std::uint64_t polls = impl.rank_polls.load(std::memory_order_relaxed);
  if (polls == impl.rank_polls_seen.load(std::memory_order_relaxed)) {
    impl.rank_polls.store(polls + 1, std::memory_order_relaxed);
  }
  return progress();
}

bool Transport::progress() {
  Impl& impl = *impl_;
  Impl::Serialized serialized(impl, std::try_to_lock);
  return serialized.owns() && impl.progress_locked() > 0;
}

void Transport::receive(int process, void* desc, std::size_t wire_bytes, std::size_t bytes,
                        void* buffer, std::size_t count, const Datatype& type,
                        std::function<void(std::size_t)> done) {
  // Called from on_message, under the lock, inside ucp_worker_progress.
  impl_->deferred.push_back(
      std::unique_ptr<Fetch>(new Fetch{process, desc, wire_bytes, bytes, buffer, count, &type,
                                       std::move(done), nullptr, nullptr, nullptr}));
}

std::size_t Transport::receive_now(int process, void* desc, std::size_t wire_bytes,
                                   std::size_t bytes, void* buffer, std::size_t count,
                                   const Datatype& type) {
  Impl& impl = *impl_;
  // release/acquire: the moved count is written before the flag is seen set.
  std::atomic<bool> arrived{false};
  std::size_t moved = 0;
  {
    Impl::Serialized serialized(impl);
    impl.start_fetch(
        std::unique_ptr<Fetch>(new Fetch{process, desc, wire_bytes, bytes, buffer, count, &type,
                                         [&](std::size_t m) {
                                           moved = m;
                                           arrived.store(true, std::memory_order_release);
                                         },
                                         nullptr, nullptr, nullptr}));
  }
  while (!arrived.load(std::memory_order_acquire)) {
    if (Impl::Serialized serialized(impl, std::try_to_lock); serialized.owns()) {
      impl.progress_locked();
    }
    this_thread::yield();
  }
  return moved;
}

bool Transport::cancel(int dest_world_rank, std::uint64_t key) {
  Impl& impl = *impl_;
  Cancel waiting;
  {
    Impl::Serialized serialized(impl);
    std::unique_ptr<char[]> header(new char[sizeof(CancelHeader)]);
    const CancelHeader asked{key, reinterpret_cast<std::uint64_t>(&waiting), dest_world_rank,
                             impl.world.process()};
    std::memcpy(header.get(), &asked, sizeof asked);
    impl.send_control(impl.world.layout().process_of(dest_world_rank), kCancelId, std::move(header),
                      sizeof asked);
    impl.went_in_flight();  // the answer comes from progress: keep the worker polled
  }
  int answer = -1;
  while ((answer = waiting.answer.load(std::memory_order_acquire)) < 0) {
    if (Impl::Serialized serialized(impl, std::try_to_lock); serialized.owns()) {
      impl.progress_locked();
    }
    this_thread::yield();
  }
  // relaxed: pairs with went_in_flight() above, as the other in-flight counts do.
  impl.in_flight.fetch_sub(1, std::memory_order_relaxed);
  return answer == 1;
}

Transport::Traffic Transport::traffic() {
  Impl& impl = *impl_;
  Impl::Serialized serialized(impl);
  Traffic traffic;
  traffic.sent = impl.next_sequence;
  traffic.received = impl.expected_sequence;
  bool held = false;
  for (const auto& early : impl.early) held = held || !early.empty();
  // relaxed: read under the lock its changes are made under.
  traffic.busy = held || !impl.deferred.empty() || !impl.cancels.empty() ||
                 impl.in_flight.load(std::memory_order_relaxed) != 0;
  return traffic;
}

void Transport::discard(void* desc) {
  Impl::Serialized serialized(*impl_);
  ucp_am_data_release(impl_->worker, desc);
}

}  // namespace weft::mpi
