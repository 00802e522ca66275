// The exchange through PMIx, when a PMIx launcher (Open MPI's mpirun, Slurm's srun --mpi=pmix)
// started this process: Put and Commit, Fence collecting the data, Get.
#include <pmix.h>

#include <cstring>
#include <memory>
#include <string>

#include "bootstrap_connect.h"
#include "weft/error.h"

namespace weft::bootstrap {
namespace {

// Keys of weft's own: the pmix. prefix belongs to PMIx.
constexpr std::string_view kKeyPrefix = "weft.";

void check(pmix_status_t status, const std::string& call) {
  if (status != PMIX_SUCCESS) {
    throw Error("bootstrap (PMIx): " + call + " failed: " + PMIx_Error_string(status) + " (" +
                std::to_string(status) + ")");
  }
}

std::string pmix_key(std::string_view key, std::string_view call) {
  std::string full = std::string(kKeyPrefix) + std::string(key);
  if (full.size() > PMIX_MAX_KEYLEN) {
    throw Error("Bootstrap::" + std::string(call) + ": key '" + std::string(key) + "' is " +
                std::to_string(key.size()) + " bytes long; expected at most " +
                std::to_string(PMIX_MAX_KEYLEN - kKeyPrefix.size()) + " under PMIx");
  }
  return full;
}

// A value PMIx_Get allocated.
struct ValueRelease {
  void operator()(pmix_value_t* value) const { PMIX_VALUE_RELEASE(value); }
};
using Value = std::unique_ptr<pmix_value_t, ValueRelease>;

// PMIx_Init on construction, PMIx_Finalize on destruction.
class PmixSession {
 public:
  PmixSession() { check(PMIx_Init(&self_, nullptr, 0), "PMIx_Init"); }
  ~PmixSession() { PMIx_Finalize(nullptr, 0); }
  PmixSession(const PmixSession&) = delete;
  PmixSession& operator=(const PmixSession&) = delete;

  const pmix_proc_t& self() const { return self_; }
  pmix_proc_t peer(int rank) const {
    pmix_proc_t proc;
    std::memcpy(proc.nspace, self_.nspace, sizeof proc.nspace);
    proc.rank = static_cast<pmix_rank_t>(rank);
    return proc;
  }

  int job_size() const {
    pmix_proc_t job = peer(0);
    job.rank = PMIX_RANK_WILDCARD;
    pmix_value_t* raw = nullptr;
    check(PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &raw), "PMIx_Get(PMIX_JOB_SIZE)");
    Value value(raw);
    if (value->type != PMIX_UINT32) {
      throw Error("bootstrap (PMIx): PMIx_Get(PMIX_JOB_SIZE) returned a value of type " +
                  std::string(PMIx_Data_type_string(value->type)) + "; expected PMIX_UINT32");
    }
    return static_cast<int>(value->data.uint32);
  }

 private:
  pmix_proc_t self_{};
};

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap(std::unique_ptr<PmixSession> session, RankLayout layout)
      : session_(std::move(session)), layout_(layout) {}

  int process() const override { return static_cast<int>(session_->self().rank); }
  const RankLayout& layout() const override { return layout_; }

  void put(std::string_view key, std::string_view value) override {
    const std::string name = pmix_key(key, "put");
    pmix_byte_object_t bytes;
    bytes.bytes = const_cast<char*>(value.data());
    bytes.size = value.size();
    pmix_value_t loaded;
    PMIX_VALUE_CONSTRUCT(&loaded);
    check(PMIx_Value_load(&loaded, &bytes, PMIX_BYTE_OBJECT), "PMIx_Value_load");
    const pmix_status_t status = PMIx_Put(PMIX_GLOBAL, name.c_str(), &loaded);
    PMIx_Value_destruct(&loaded);
    check(status, "PMIx_Put('" + name + "')");
  }

  void fence() override {
    ++fences_;
    check(PMIx_Commit(), "PMIx_Commit");
    pmix_info_t collect;
    PMIX_INFO_CONSTRUCT(&collect);
    bool yes = true;
    check(PMIx_Info_load(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL), "PMIx_Info_load");
    pmix_proc_t everyone = session_->peer(0);
    everyone.rank = PMIX_RANK_WILDCARD;
    const pmix_status_t status = PMIx_Fence(&everyone, 1, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    check(status, "PMIx_Fence (fence " + std::to_string(fences_) + ", collecting data)");
  }

  std::string get(int process, std::string_view key) override {
    if (process < 0 || process >= layout_.processes()) {
      throw Error("Bootstrap::get: process " + std::to_string(process) +
                  " does not exist; expected 0.." + std::to_string(layout_.processes() - 1));
    }
    const std::string name = pmix_key(key, "get");
    const pmix_proc_t peer = session_->peer(process);
    // The data was collected by the fence: look only there, never ask the server and wait.
    pmix_info_t optional;
    PMIX_INFO_CONSTRUCT(&optional);
    bool yes = true;
    check(PMIx_Info_load(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL), "PMIx_Info_load");
    pmix_value_t* raw = nullptr;
    const pmix_status_t status = PMIx_Get(&peer, name.c_str(), &optional, 1, &raw);
    PMIX_INFO_DESTRUCT(&optional);
    if (status == PMIX_ERR_NOT_FOUND) {
      throw Error("Bootstrap::get: process " + std::to_string(process) + " put nothing under '" +
                  std::string(key) + "' before fence " + std::to_string(fences_) + " (PMIx)");
    }
    check(status, "PMIx_Get('" + name + "' of process " + std::to_string(process) + ")");
    Value value(raw);
    if (value->type != PMIX_BYTE_OBJECT) {
      throw Error("bootstrap (PMIx): PMIx_Get('" + name + "' of process " +
                  std::to_string(process) + ") returned a value of type " +
                  PMIx_Data_type_string(value->type) + "; expected PMIX_BYTE_OBJECT");
    }
    return std::string(value->data.bo.bytes, value->data.bo.size);
  }

 private:
  std::unique_ptr<PmixSession> session_;
  RankLayout layout_;
  int fences_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> connect_pmix(int ranks) {
  auto session = std::make_unique<PmixSession>();
  const int processes = session->job_size();
  if (processes < 1) {
    throw Error("bootstrap (PMIx): PMIX_JOB_SIZE is " + std::to_string(processes) +
                "; expected at least 1");
  }
  RankLayout layout(ranks * processes, processes);
  return std::make_unique<PmixBootstrap>(std::move(session), layout);
}

}  // namespace weft::bootstrap
