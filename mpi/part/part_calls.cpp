// The partitioned communication calls (MPI-4.1 4): MPI_Psend_init, MPI_Precv_init, MPI_Pready
// and its range and list forms, MPI_Parrived. MPI_Start, MPI_Wait, MPI_Test and
// MPI_Request_free treat the request as a persistent one (part/channel.h).
#include <climits>
#include <memory>
#include <string>

#include "errhan/error.h"
#include "init/world.h"
#include "part/channel.h"
#include "pt2pt/p2p.h"
#include "util/profiling.h"

using weft::mpi::Request;
using weft::mpi::part::Channel;

namespace {

int init(std::string_view function, bool sender, const void* buf, int partitions, MPI_Count count,
         MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, MPI_Request* handle) {
  weft::mpi::Caller caller;
  if (count < 0 || count > INT_MAX) {
    if (int rc = weft::mpi::check_caller(function, comm, &caller); rc != MPI_SUCCESS) return rc;
    return weft::mpi::raise(comm, function, MPI_ERR_COUNT,
                            "count = " + std::to_string(count) + ", expected 0.." +
                                std::to_string(INT_MAX) + " elements per partition");
  }
  const int elements = static_cast<int>(count);
  const int rc =
      sender ? weft::mpi::check_send(function, buf, elements, datatype, peer, tag, comm, &caller)
             : weft::mpi::check_recv(function, buf, elements, datatype, peer, tag, comm, &caller);
  if (rc != MPI_SUCCESS) return rc;
  if (!sender && (peer == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)) {
    return weft::mpi::raise(comm, function, peer == MPI_ANY_SOURCE ? MPI_ERR_RANK : MPI_ERR_TAG,
                            peer == MPI_ANY_SOURCE
                                ? "source = MPI_ANY_SOURCE, expected a rank: partitioned "
                                  "receives take no wildcards (MPI-4.1 4.2.2)"
                                : "tag = MPI_ANY_TAG, expected a tag: partitioned receives take "
                                  "no wildcards (MPI-4.1 4.2.2)");
  }
  if (partitions < 1) {
    return weft::mpi::raise(comm, function, MPI_ERR_ARG,
                            "partitions = " + std::to_string(partitions) + ", expected 1 or more");
  }
  if (int rc2 = weft::mpi::check_out(comm, function, "request", handle); rc2 != MPI_SUCCESS) {
    return rc2;
  }
  const Channel::Layout layout{
      const_cast<void*>(buf), partitions, elements, datatype, peer, tag, comm};
  Request* request = caller.state->requests.get();
  weft::mpi::prepare(*request, weft::mpi::RequestKind::collective, weft::mpi::SendMode::standard,
                     buf, elements, datatype, peer, tag, comm, caller);
  request->persistent = true;
  request->spanning_call = function;
  request->restart = weft::mpi::part::Starter{std::make_shared<Channel>(sender, layout, caller)};
  *handle = request;
  return MPI_SUCCESS;
}

// The channel of an active partitioned request of the wanted side, or the error raised.
int check_request(std::string_view function, MPI_Request request, bool sender, Channel** out) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  Channel* channel = weft::mpi::part::channel_of(request);
  if (channel == nullptr || channel->sender() != sender) {
    return weft::mpi::raise(
        request != MPI_REQUEST_NULL ? request->comm : MPI_COMM_WORLD, function, MPI_ERR_REQUEST,
        std::string(request == MPI_REQUEST_NULL ? "request = MPI_REQUEST_NULL"
                                                : "the request is not partitioned") +
            (sender ? ", expected one made by MPI_Psend_init"
                    : ", expected one made by MPI_Precv_init"));
  }
  if (sender && !request->active) {
    return weft::mpi::raise(request->comm, function, MPI_ERR_REQUEST,
                            "the partitioned request is not started, expected MPI_Start first");
  }
  *out = channel;
  return MPI_SUCCESS;
}

int check_partition(std::string_view function, const Channel& channel, int partition) {
  if (partition >= 0 && partition < channel.partitions()) return MPI_SUCCESS;
  return weft::mpi::raise(channel.comm(), function, MPI_ERR_ARG,
                          "partition = " + std::to_string(partition) + ", expected 0.." +
                              std::to_string(channel.partitions() - 1));
}

int ready_one(std::string_view function, Channel& channel, int partition) {
  if (int rc = check_partition(function, channel, partition); rc != MPI_SUCCESS) return rc;
  const int rc = channel.ready(partition, function);
  if (rc == MPI_ERR_ARG) {
    return weft::mpi::raise(channel.comm(), function, MPI_ERR_ARG,
                            "partition " + std::to_string(partition) +
                                " is ready already in this round, expected each partition "
                                "marked ready once between MPI_Start and completion");
  }
  return rc;
}

}  // namespace

extern "C" int PMPI_Psend_init(const void* buf, int partitions, MPI_Count count,
                               MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Info /*info*/, MPI_Request* request) {
  return init("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm, request);
}
WEFT_MPI_ALIAS(MPI_Psend_init);

extern "C" int PMPI_Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                               int source, int tag, MPI_Comm comm, MPI_Info /*info*/,
                               MPI_Request* request) {
  return init("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm,
              request);
}
WEFT_MPI_ALIAS(MPI_Precv_init);

extern "C" int PMPI_Pready(int partition, MPI_Request request) {
  Channel* channel = nullptr;
  if (int rc = check_request("MPI_Pready", request, true, &channel); rc != MPI_SUCCESS) return rc;
  return ready_one("MPI_Pready", *channel, partition);
}
WEFT_MPI_ALIAS(MPI_Pready);

extern "C" int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
  constexpr std::string_view kFunction = "MPI_Pready_range";
  Channel* channel = nullptr;
  if (int rc = check_request(kFunction, request, true, &channel); rc != MPI_SUCCESS) return rc;
  if (partition_low > partition_high) {
    return weft::mpi::raise(request->comm, kFunction, MPI_ERR_ARG,
                            "partition_low = " + std::to_string(partition_low) +
                                " > partition_high = " + std::to_string(partition_high) +
                                ", expected a non-empty range");
  }
  if (int rc = check_partition(kFunction, *channel, partition_low); rc != MPI_SUCCESS) return rc;
  if (int rc = check_partition(kFunction, *channel, partition_high); rc != MPI_SUCCESS) return rc;
  for (int p = partition_low; p <= partition_high; ++p) {
    if (int rc = ready_one(kFunction, *channel, p); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Pready_range);

extern "C" int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request) {
  constexpr std::string_view kFunction = "MPI_Pready_list";
  Channel* channel = nullptr;
  if (int rc = check_request(kFunction, request, true, &channel); rc != MPI_SUCCESS) return rc;
  if (length < 0 || (length > 0 && array_of_partitions == nullptr)) {
    return weft::mpi::raise(request->comm, kFunction, MPI_ERR_ARG,
                            length < 0 ? "length = " + std::to_string(length) + ", expected >= 0"
                                       : std::string("array_of_partitions = NULL, expected an "
                                                     "array of length partitions"));
  }
  for (int i = 0; i < length; ++i) {
    if (int rc = ready_one(kFunction, *channel, array_of_partitions[i]); rc != MPI_SUCCESS) {
      return rc;
    }
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Pready_list);

extern "C" int PMPI_Parrived(MPI_Request request, int partition, int* flag) {
  constexpr std::string_view kFunction = "MPI_Parrived";
  Channel* channel = nullptr;
  if (int rc = check_request(kFunction, request, false, &channel); rc != MPI_SUCCESS) return rc;
  if (int rc = check_partition(kFunction, *channel, partition); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(request->comm, kFunction, "flag", flag); rc != MPI_SUCCESS) {
    return rc;
  }
  *flag = channel->arrived(*request, partition) ? 1 : 0;
  if (*flag == 0) weft::mpi::after_failed_test();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Parrived);
