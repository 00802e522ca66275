/* UCX's own floor under weft's latency between processes: two processes, bound to cores 0 and 1,
 * ping-pong an 8-byte UCX active message with weft's transport settings (features AM and WAKEUP,
 * a serialized worker, a 40-byte header like weft's envelope) and nothing else on the path: no
 * matching, no scheduler. weft's latency_8B_2procs cannot go below it; bench/mpi/ucx_run prints
 * it beside the MPI figures. Plain C and UCX, no MPI.
 *
 * usage: ucx_floor; prints `RESULT latency_ucx_floor_8B <us> us` (half a round trip, the median of
 * 5 batches).
 *
 * `ucx_floor lockstep <trips>` times nothing: it does <trips> round trips in lock step, as
 * bench/mpi/lockstep.c does with MPI, for counting instructions under callgrind
 * (bench/mpi/ucx_instructions): each side waits for the other's word on the pipes before it
 * polls, so that one progress call finds each message and no wait spins. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include "floor_pipe.h"

static const char kProgram[] = "ucx_floor";

enum { kTrips = 100000, kWarmup = 10000, kBatches = 5, kHeaderBytes = 40, kAmId = 1 };

static volatile long arrived;

static ucs_status_t on_message(void* arg, const void* header, size_t header_length, void* data,
                               size_t length, const ucp_am_recv_param_t* param) {
  (void)arg, (void)header, (void)header_length, (void)data, (void)length, (void)param;
  ++arrived;
  return UCS_OK;
}

static void die(const char* who, const char* call, ucs_status_t status) {
  fprintf(stderr, "ucx_floor (%s): %s failed: %s\n", who, call, ucs_status_string(status));
  exit(1);
}

/* Not inlined: bench/mpi/ucx_instructions counts their instructions. */
__attribute__((noinline)) static void send_one(ucp_worker_h worker, ucp_ep_h ep, const char* who) {
  static char header[kHeaderBytes];
  static char payload[8];
  const ucp_request_param_t param = {0};
  void* request =
      ucp_am_send_nbx(ep, kAmId, header, sizeof header, payload, sizeof payload, &param);
  if (UCS_PTR_IS_ERR(request)) die(who, "ucp_am_send_nbx", UCS_PTR_STATUS(request));
  if (request == NULL) return;
  while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker);
  ucp_request_free(request);
}

__attribute__((noinline)) static void receive_one(ucp_worker_h worker) {
  const long want = arrived + 1;
  while (arrived < want) ucp_worker_progress(worker);
}

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  long lockstep_trips = 0;
  if (argc == 3 && strcmp(argv[1], "lockstep") == 0) {
    lockstep_trips = atol(argv[2]);
  } else if (argc != 1) {
    fprintf(stderr, "usage: ucx_floor [lockstep <trips>]\n");
    return 2;
  }
  int to_child[2], to_parent[2];
  if (pipe(to_child) != 0 || pipe(to_parent) != 0) {
    perror("ucx_floor: pipe");
    return 1;
  }
  const pid_t child = fork();
  if (child < 0) {
    perror("ucx_floor: fork");
    return 1;
  }
  const int pinger = child != 0;
  const char* who = pinger ? "pinger" : "echo";
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(pinger ? 0 : 1, &set);
  /* Unbound, the figure means less, but it is still measured. */
  (void)sched_setaffinity(0, sizeof set, &set);

  ucp_params_t params = {0};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  ucp_config_t* config;
  ucs_status_t status = ucp_config_read(NULL, NULL, &config);
  if (status != UCS_OK) die(who, "ucp_config_read", status);
  ucp_context_h context;
  status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) die(who, "ucp_init", status);
  ucp_worker_params_t worker_params = {0};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucp_worker_h worker;
  status = ucp_worker_create(context, &worker_params, &worker);
  if (status != UCS_OK) die(who, "ucp_worker_create", status);
  ucp_am_handler_param_t handler = {0};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
  handler.id = kAmId;
  handler.cb = on_message;
  status = ucp_worker_set_am_recv_handler(worker, &handler);
  if (status != UCS_OK) die(who, "ucp_worker_set_am_recv_handler", status);

  ucp_address_t* address;
  size_t length;
  status = ucp_worker_get_address(worker, &address, &length);
  if (status != UCS_OK) die(who, "ucp_worker_get_address", status);
  const int out = pinger ? to_child[1] : to_parent[1];
  const int in = pinger ? to_parent[0] : to_child[0];
  pipe_write_all(kProgram, out, &length, sizeof length);
  pipe_write_all(kProgram, out, address, length);
  ucp_worker_release_address(worker, address);
  size_t peer_length;
  pipe_read_all(kProgram, in, &peer_length, sizeof peer_length);
  void* peer = malloc(peer_length);
  if (peer == NULL) return 1;
  pipe_read_all(kProgram, in, peer, peer_length);
  ucp_ep_params_t ep_params = {0};
  ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  ep_params.address = peer;
  ucp_ep_h ep;
  status = ucp_ep_create(worker, &ep_params, &ep);
  if (status != UCS_OK) die(who, "ucp_ep_create", status);

  char token = 0;
  for (long trip = 0; trip < lockstep_trips; ++trip) {
    if (pinger) {
      send_one(worker, ep, who);
      pipe_write_all(kProgram, out, &token, 1);
      pipe_read_all(kProgram, in, &token, 1);
      receive_one(worker);
    } else {
      pipe_read_all(kProgram, in, &token, 1);
      receive_one(worker);
      send_one(worker, ep, who);
      pipe_write_all(kProgram, out, &token, 1);
    }
  }
  double one_way[kBatches];
  for (int batch = lockstep_trips > 0 ? kBatches : -1; batch < kBatches; ++batch) {
    const int trips = batch < 0 ? kWarmup : kTrips;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int trip = 0; trip < trips; ++trip) {
      if (pinger) {
        send_one(worker, ep, who);
        receive_one(worker);
      } else {
        receive_one(worker);
        send_one(worker, ep, who);
      }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    const double seconds =
        (double)(end.tv_sec - start.tv_sec) + 1e-9 * (double)(end.tv_nsec - start.tv_nsec);
    if (batch >= 0) one_way[batch] = seconds * 1e6 / (2.0 * trips);
  }
  /* Both sides are done with the endpoint only once each has received the other's last message,
   * which the ping-pong's order guarantees; a byte on the pipes then ends the job cleanly. */
  char done = 0;
  pipe_write_all(kProgram, out, &done, 1);
  pipe_read_all(kProgram, in, &done, 1);
  ucp_ep_destroy(ep);
  free(peer);
  ucp_worker_destroy(worker);
  ucp_cleanup(context);
  if (!pinger) return 0;
  int child_status = 0;
  if (waitpid(child, &child_status, 0) != child || !WIFEXITED(child_status) ||
      WEXITSTATUS(child_status) != 0) {
    fprintf(stderr, "ucx_floor: the echo process failed\n");
    return 1;
  }
  if (lockstep_trips > 0) return 0;
  qsort(one_way, kBatches, sizeof one_way[0], compare);
  printf("RESULT latency_ucx_floor_8B %.4g us\n", one_way[kBatches / 2]);
  return 0;
}
