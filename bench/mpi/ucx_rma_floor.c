/* UCX's own one-sided floor under weft's RMA between processes: two processes, bound to cores 0
 * and 1, the target's memory registered with ucp_mem_map and reached through its packed rkey by
 * ucp_put_nbx / ucp_get_nbx / ucp_atomic_op_nbx, each followed by a flush (ucp_ep_flush_nbx) as
 * MPI_Win_flush follows an MPI_Put in bench/mpi/rma.c. Nothing else is on the path: no MPI, no
 * window, no scheduler. The target only progresses its worker (UCX may need it to) until the origin
 * writes the end flag into its memory. Plain C and UCX.
 *
 * usage: ucx_rma_floor <allocate|map> [count <put|get> <operations>]
 *   allocate: the target's memory is allocated by ucp_mem_map (UCP_MEM_MAP_ALLOCATE), so UCX may
 *             place it where its shared-memory transports reach it directly (weft's
 *             MPI_Win_allocate);
 *   map:      the target's memory is the program's (malloc), registered by ucp_mem_map
 *             (weft's MPI_Win_create).
 * Prints `RESULT put_latency_8B <us> us`, `get_latency_8B`, `put_bandwidth_4MiB <MB/s> MB/s`,
 * `get_bandwidth_4MiB` and `fop_rate <Mops/s> Mops/s` (the medians of 5 batches), names as
 * bench/mpi/rma.c prints them. With `count`, it only makes that many 8-byte puts or gets, each
 * followed by a flush, untimed, for counting instructions under callgrind
 * (bench/mpi/rma_instructions counts those inside put() and get()). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include "floor_pipe.h"

static const char kProgram[] = "ucx_rma_floor";

enum { kBatches = 5, kLargest = 4 << 20, kBurst = 4 };

/* The target's memory: kLargest bytes of data, then the end flag and the atomic counter. */
enum { kFlagOffset = kLargest, kCounterOffset = kLargest + 64, kTargetBytes = kLargest + 128 };

static const char* who = "?";

static void die(const char* call, ucs_status_t status) {
  fprintf(stderr, "ucx_rma_floor (%s): %s failed: %s\n", who, call, ucs_status_string(status));
  exit(1);
}

/* A length-prefixed blob through a pipe. */
static void send_blob(int fd, const void* data, size_t length) {
  pipe_write_all(kProgram, fd, &length, sizeof length);
  pipe_write_all(kProgram, fd, data, length);
}

static void* receive_blob(int fd) {
  size_t length = 0;
  pipe_read_all(kProgram, fd, &length, sizeof length);
  void* data = malloc(length);
  if (data == NULL) exit(1);
  pipe_read_all(kProgram, fd, data, length);
  return data;
}

static ucp_worker_h worker;

static void wait_for(void* request, const char* call) {
  if (request == NULL) return;
  if (UCS_PTR_IS_ERR(request)) die(call, UCS_PTR_STATUS(request));
  ucs_status_t status;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
    ucp_worker_progress(worker);
  }
  ucp_request_free(request);
  if (status != UCS_OK) die(call, status);
}

struct origin {
  ucp_ep_h ep;
  ucp_rkey_h rkey;
  uint64_t remote; /* the target's memory, in its address space */
  char* buffer;
};

static void flush(struct origin* o) {
  const ucp_request_param_t param = {0};
  wait_for(ucp_ep_flush_nbx(o->ep, &param), "ucp_ep_flush_nbx");
}

/* Not inlined: bench/mpi/rma_instructions counts what runs inside put() and get(). */
__attribute__((noinline)) static void put(struct origin* o, size_t bytes, int burst) {
  const ucp_request_param_t param = {0};
  for (int i = 0; i < burst; ++i) {
    void* request = ucp_put_nbx(o->ep, o->buffer, bytes, o->remote, o->rkey, &param);
    if (UCS_PTR_IS_ERR(request)) die("ucp_put_nbx", UCS_PTR_STATUS(request));
    if (request != NULL) ucp_request_free(request); /* the flush completes it */
  }
  flush(o);
}

__attribute__((noinline)) static void get(struct origin* o, size_t bytes, int burst) {
  const ucp_request_param_t param = {0};
  for (int i = 0; i < burst; ++i) {
    void* request = ucp_get_nbx(o->ep, o->buffer, bytes, o->remote, o->rkey, &param);
    if (UCS_PTR_IS_ERR(request)) die("ucp_get_nbx", UCS_PTR_STATUS(request));
    if (request != NULL) ucp_request_free(request);
  }
  flush(o);
}

static uint64_t fetch_add(struct origin* o) {
  static uint64_t one = 1;
  uint64_t old = 0;
  ucp_request_param_t param = {0};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
  param.datatype = ucp_dt_make_contig(sizeof one);
  param.reply_buffer = &old;
  wait_for(ucp_atomic_op_nbx(o->ep, UCP_ATOMIC_OP_ADD, &one, 1, o->remote + kCounterOffset, o->rkey,
                             &param),
           "ucp_atomic_op_nbx");
  flush(o);
  return old;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

enum kind { kPut, kGet, kFetchAdd };

/* Seconds per call of the operation: batches of about 50 ms, the median of kBatches. */
static double measure(struct origin* o, enum kind kind, size_t bytes, int burst) {
  long calls = 1;
  for (;;) { /* calibration, which also warms up */
    const double start = now();
    for (long i = 0; i < calls; ++i) {
      if (kind == kPut) put(o, bytes, burst);
      if (kind == kGet) get(o, bytes, burst);
      if (kind == kFetchAdd) fetch_add(o);
    }
    const double elapsed = now() - start;
    if (elapsed > 0.05 || calls >= (1L << 30)) break;
    calls *= 2;
  }
  double per_call[kBatches];
  for (int b = 0; b < kBatches; ++b) {
    const double start = now();
    for (long i = 0; i < calls; ++i) {
      if (kind == kPut) put(o, bytes, burst);
      if (kind == kGet) get(o, bytes, burst);
      if (kind == kFetchAdd) fetch_add(o);
    }
    per_call[b] = (now() - start) / (double)calls;
  }
  qsort(per_call, kBatches, sizeof per_call[0], compare);
  return per_call[kBatches / 2];
}

int main(int argc, char** argv) {
  const int allocate = argc > 1 && strcmp(argv[1], "allocate") == 0;
  const int count = argc == 5 && strcmp(argv[2], "count") == 0 &&
                    (strcmp(argv[3], "put") == 0 || strcmp(argv[3], "get") == 0);
  if ((argc != 2 && !count) || (!allocate && strcmp(argv[1], "map") != 0)) {
    fprintf(stderr, "usage: ucx_rma_floor <allocate|map> [count <put|get> <operations>]\n");
    return 2;
  }
  int to_child[2], to_parent[2];
  if (pipe(to_child) != 0 || pipe(to_parent) != 0) {
    perror("ucx_rma_floor: pipe");
    return 1;
  }
  const pid_t child = fork();
  if (child < 0) {
    perror("ucx_rma_floor: fork");
    return 1;
  }
  const int is_origin = child != 0;
  who = is_origin ? "origin" : "target";
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(is_origin ? 0 : 1, &set);
  (void)sched_setaffinity(0, sizeof set, &set); /* unbound, the figure still means something */
  const int out = is_origin ? to_child[1] : to_parent[1];
  const int in = is_origin ? to_parent[0] : to_child[0];

  ucp_params_t params = {0};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64;
  ucp_config_t* config;
  ucs_status_t status = ucp_config_read(NULL, NULL, &config);
  if (status != UCS_OK) die("ucp_config_read", status);
  ucp_context_h context;
  status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) die("ucp_init", status);
  ucp_worker_params_t worker_params = {0};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  status = ucp_worker_create(context, &worker_params, &worker);
  if (status != UCS_OK) die("ucp_worker_create", status);

  ucp_address_t* address;
  size_t address_length;
  status = ucp_worker_get_address(worker, &address, &address_length);
  if (status != UCS_OK) die("ucp_worker_get_address", status);
  send_blob(out, address, address_length);
  ucp_worker_release_address(worker, address);
  void* peer = receive_blob(in);
  ucp_ep_params_t ep_params = {0};
  ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  ep_params.address = peer;
  ucp_ep_h ep;
  status = ucp_ep_create(worker, &ep_params, &ep);
  if (status != UCS_OK) die("ucp_ep_create", status);

  /* Each side registers its memory: the target's window, the origin's buffer. */
  const size_t bytes = is_origin ? kLargest : kTargetBytes;
  char* memory = NULL;
  if (!allocate || is_origin) {
    memory = aligned_alloc(4096, bytes);
    if (memory == NULL) return 1;
    memset(memory, 0, bytes);
  }
  ucp_mem_map_params_t map = {0};
  map.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                   UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  map.address = memory;
  map.length = bytes;
  map.flags = memory == NULL ? UCP_MEM_MAP_ALLOCATE : 0;
  ucp_mem_h handle;
  status = ucp_mem_map(context, &map, &handle);
  if (status != UCS_OK) die("ucp_mem_map", status);
  ucp_mem_attr_t attr = {0};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  status = ucp_mem_query(handle, &attr);
  if (status != UCS_OK) die("ucp_mem_query", status);
  memory = attr.address;

  if (!is_origin) {
    memset(memory, 0, kTargetBytes);
    void* rkey_buffer;
    size_t rkey_length;
    status = ucp_rkey_pack(context, handle, &rkey_buffer, &rkey_length);
    if (status != UCS_OK) die("ucp_rkey_pack", status);
    const uint64_t base = (uintptr_t)memory;
    send_blob(out, &base, sizeof base);
    send_blob(out, rkey_buffer, rkey_length);
    ucp_rkey_buffer_release(rkey_buffer);
    /* Until the origin is done, progress (UCX may emulate RMA with messages it must answer). */
    volatile char* flag = memory + kFlagOffset;
    while (*flag == 0) ucp_worker_progress(worker);
    if (memory[0] != 'g' || memory[kLargest - 1] != 'g') {
      fprintf(stderr, "ucx_rma_floor: the target's memory does not hold what was put\n");
      return 1;
    }
  } else {
    struct origin o = {ep, NULL, 0, memory};
    uint64_t* base = receive_blob(in);
    o.remote = *base;
    free(base);
    void* rkey_buffer = receive_blob(in);
    status = ucp_ep_rkey_unpack(ep, rkey_buffer, &o.rkey);
    if (status != UCS_OK) die("ucp_ep_rkey_unpack", status);
    free(rkey_buffer);
    if (count) {
      const long operations = atol(argv[4]);
      for (long i = 0; i < operations; ++i) {
        if (argv[3][0] == 'p') {
          put(&o, 8, 1);
        } else {
          get(&o, 8, 1);
        }
      }
      /* What the target checks at the end, outside put() so as not to be counted. */
      memset(memory, 'g', kLargest);
      const ucp_request_param_t param = {0};
      wait_for(ucp_put_nbx(ep, memory, kLargest, o.remote, o.rkey, &param), "ucp_put_nbx");
      flush(&o);
    } else {
      double put8 = measure(&o, kPut, 8, 1);
      double get8 = measure(&o, kGet, 8, 1);
      const uint64_t before = fetch_add(&o);
      double fop = measure(&o, kFetchAdd, 8, 1);
      if (fetch_add(&o) <= before) {
        fprintf(stderr, "ucx_rma_floor: the atomic counter did not grow\n");
        return 1;
      }
      memset(memory, 'g', kLargest);
      double put_large = measure(&o, kPut, kLargest, kBurst);
      memset(memory, 0, kLargest);
      double get_large = measure(&o, kGet, kLargest, kBurst);
      if (memory[0] != 'g' || memory[kLargest - 1] != 'g') {
        fprintf(stderr, "ucx_rma_floor: ucp_get_nbx brought wrong data\n");
        return 1;
      }
      printf("RESULT put_latency_8B %.4g us\n", put8 * 1e6);
      printf("RESULT get_latency_8B %.4g us\n", get8 * 1e6);
      printf("RESULT put_bandwidth_4MiB %.6g MB/s\n", (double)kLargest * kBurst / put_large / 1e6);
      printf("RESULT get_bandwidth_4MiB %.6g MB/s\n", (double)kLargest * kBurst / get_large / 1e6);
      printf("RESULT fop_rate %.4g Mops/s\n", 1.0 / fop / 1e6);
      fflush(stdout);
    }
    static const char done = 1;
    const ucp_request_param_t param = {0};
    wait_for(ucp_put_nbx(ep, &done, 1, o.remote + kFlagOffset, o.rkey, &param), "ucp_put_nbx");
    flush(&o);
    ucp_rkey_destroy(o.rkey);
  }
  /* Neither side touches the other's memory any more; a byte each way ends the job cleanly. */
  char byte = 0;
  pipe_write_all(kProgram, out, &byte, 1);
  pipe_read_all(kProgram, in, &byte, 1);
  ucp_mem_unmap(context, handle);
  if (!allocate || is_origin) free(memory);
  ucp_ep_destroy(ep);
  free(peer);
  ucp_worker_destroy(worker);
  ucp_cleanup(context);
  if (!is_origin) return 0;
  int child_status = 0;
  if (waitpid(child, &child_status, 0) != child || !WIFEXITED(child_status) ||
      WEXITSTATUS(child_status) != 0) {
    fprintf(stderr, "ucx_rma_floor: the target process failed\n");
    return 1;
  }
  return 0;
}
