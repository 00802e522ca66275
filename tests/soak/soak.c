// Random traffic among all ranks, checked against MPI's matching rules (docs/testing.md, "Soak").
//
//   soak [--seed S] [--messages N] [--seconds T] [--max-size BYTES] [--quiet]
//
// Runs rounds until N messages were sent (default 20000) or T seconds passed (whichever comes
// first; 0 = no limit). In a round every rank sends 0 to 8 messages of random size (0 B to
// --max-size, default 4 MiB, skewed to small), tag and destination; the plan of a round comes
// from the seed alone, so every rank knows what it must receive, and the same seed replays it.
// Receivers take them in phases of one receive shape each (exact, MPI_ANY_TAG, MPI_ANY_SOURCE,
// both, MPI_Probe / MPI_Iprobe / MPI_Improbe then a receive), MPI_Cancel some receives at once,
// and check every message against the rule a correct MPI follows: taking receives in the order
// they were posted, each got the earliest message of its sender that it matches and that no
// earlier receive took (the non-overtaking rule), with the size and content the plan says
// (checked byte for byte; its first bytes name the round, sender and index). A second
// communicator carries small sends that the sender tries to cancel: the receiver gets exactly
// the ones not cancelled, in order. Nonblocking collectives run beside the traffic (MPI_Ibcast
// of a random buffer from a random root, MPI_Iallreduce of the bytes sent and received,
// MPI_Ialltoall of the surviving cancel sends, MPI_Ibarrier) and are checked too. Any failure
// prints the seed, round and what differed, and ends the job with MPI_Abort(3).
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
  kMaxPerRound = 8,      // messages a rank sends in a round
  kTags = 6,             // tags 0..kTags-1 carry the traffic
  kUnusedTag = 999,      // nobody sends it: a receive for it must cancel
  kCancelTag = 7,        // the sends a sender tries to cancel (on their own communicator)
  kCancelSends = 3,      // at most, per rank and round
  kCancelMaxSize = 512,  // eager everywhere, so a send not cancelled completes without a receive
  kBcastMax = 65536,
};

static uint64_t seed = 0;
static int rank = 0, size = 1;
static size_t max_size = 4u << 20;

static uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

typedef struct {
  uint64_t state;
} Random;

static uint64_t next(Random* r) {
  r->state += 0x9e3779b97f4a7c15ull;
  return mix(r->state);
}
static uint64_t below(Random* r, uint64_t n) {
  return n == 0 ? 0 : next(r) % n;
}
static Random random_for(uint64_t a, uint64_t b, uint64_t c) {
  Random r = {mix(seed ^ mix(a * 0x100000001b3ull ^ mix(b ^ mix(c))))};
  return r;
}

static void fail(long round, const char* format, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void fail(long round, const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  fprintf(stderr, "soak: FAILED (seed %llu, round %ld, rank %d): %s\n", (unsigned long long)seed,
          round, rank, text);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

// Sizes: 5% empty, else log-uniform with the exponent skewed to small (most below 1 KiB, about
// 1 in 200 above 1 MiB).
static size_t random_size(Random* r) {
  if (below(r, 20) == 0) return 0;
  int bits = 0;
  while ((1u << bits) < max_size) ++bits;
  const double u = (double)(next(r) >> 11) / 9007199254740992.0;
  const int exponent = (int)(u * u * u * (bits + 1));
  const size_t low = exponent == 0 ? 1 : (size_t)1 << (exponent - 1);
  size_t high = (size_t)1 << exponent;
  if (high > max_size) high = max_size;
  return low + below(r, high - low + 1);
}

typedef struct {
  int dest, tag;
  size_t bytes;
  int mode;  // 0 MPI_Isend, 1 MPI_Issend, 2 MPI_Send_init + MPI_Start
} Planned;

// What `sender` sends in `round`: the same on every rank.
static int plan(long round, int sender, Planned* out) {
  Random r = random_for((uint64_t)round, (uint64_t)sender, 1);
  const int count = (int)below(&r, kMaxPerRound + 1);
  int large = 0;
  for (int i = 0; i < count; ++i) {
    out[i].dest = (int)below(&r, (uint64_t)size);
    out[i].tag = (int)below(&r, kTags);
    out[i].bytes = random_size(&r);
    // One message above 1 MiB per sender and round keeps the memory of a round bounded.
    if (out[i].bytes > (1u << 20) && large++ > 0) out[i].bytes >>= 10;
    out[i].mode = (int)below(&r, 10) < 7 ? 0 : (below(&r, 2) == 0 ? 1 : 2);
  }
  return count;
}

// A message's content: 8 bytes naming it, then a stream from its own generator.
static void fill(unsigned char* data, size_t bytes, long round, int sender, int index) {
  const uint64_t name = ((uint64_t)round << 32) | ((uint64_t)sender << 16) | (uint64_t)index;
  Random r = random_for(name, 2, 3);
  size_t i = 0;
  for (; i < bytes && i < 8; ++i) data[i] = (unsigned char)(name >> (8 * i));
  while (i < bytes) {
    uint64_t word = next(&r);
    for (int k = 0; k < 8 && i < bytes; ++k, ++i) data[i] = (unsigned char)(word >> (8 * k));
  }
}

static uint64_t checksum(const unsigned char* data, size_t bytes) {  // FNV-1a
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ data[i]) * 0x100000001b3ull;
  return hash;
}

static void check_content(long round, const unsigned char* got, size_t bytes, int sender, int index,
                          const char* how) {
  unsigned char* want = malloc(bytes > 0 ? bytes : 1);
  fill(want, bytes, round, sender, index);
  if (memcmp(got, want, bytes) != 0) {
    uint64_t name = 0;
    for (size_t i = 0; i < bytes && i < 8; ++i) name |= (uint64_t)got[i] << (8 * i);
    fail(round,
         "%s: message %d of rank %d (%zu bytes, checksum %016llx) arrived with checksum %016llx; "
         "its first bytes name round %llu, sender %llu, index %llu",
         how, index, sender, bytes, (unsigned long long)checksum(want, bytes),
         (unsigned long long)checksum(got, bytes), (unsigned long long)(name >> 32),
         (unsigned long long)((name >> 16) & 0xffff), (unsigned long long)(name & 0xffff));
  }
  free(want);
}

// What this rank receives in a round: every planned message to it, by sender in send order.
typedef struct {
  int sender, index, tag;
  size_t bytes;
  int taken;
} Expected;

typedef struct {
  Expected* list;
  int count, left;
} Inbox;

static const char* shape_name[] = {"exact", "MPI_ANY_TAG", "MPI_ANY_SOURCE",
                                   "MPI_ANY_SOURCE+MPI_ANY_TAG"};

// The earliest message not taken yet from `sender` that a receive for `tag` matches.
static Expected* earliest(Inbox* in, int sender, int tag) {
  for (int i = 0; i < in->count; ++i) {
    Expected* e = &in->list[i];
    if (!e->taken && e->sender == sender && (tag == MPI_ANY_TAG || e->tag == tag)) return e;
  }
  return NULL;
}

// Checks a completed receive for (source pattern, tag pattern) against the rule, marks what it
// took.
static void account(long round, Inbox* in, int source, int tag, const MPI_Status* status,
                    const unsigned char* data, const char* how) {
  if (source != MPI_ANY_SOURCE && status->MPI_SOURCE != source)
    fail(round, "%s: a receive from %d reports source %d", how, source, status->MPI_SOURCE);
  if (tag != MPI_ANY_TAG && status->MPI_TAG != tag)
    fail(round, "%s: a receive for tag %d reports tag %d", how, tag, status->MPI_TAG);
  Expected* e = earliest(in, status->MPI_SOURCE, tag);
  if (e == NULL)
    fail(round, "%s: got a message from rank %d tag %d that nothing left matches (duplicated?)",
         how, status->MPI_SOURCE, status->MPI_TAG);
  if (e->tag != status->MPI_TAG)
    fail(round,
         "%s: from rank %d the earliest message left is message %d (tag %d) but the receive "
         "got tag %d (overtaking)",
         how, e->sender, e->index, e->tag, status->MPI_TAG);
  int count = 0;
  MPI_Get_count(status, MPI_BYTE, &count);
  if ((size_t)count != e->bytes)
    fail(round, "%s: message %d of rank %d should have %zu bytes, the receive got %d", how,
         e->index, e->sender, e->bytes, count);
  check_content(round, data, e->bytes, e->sender, e->index, how);
  e->taken = 1;
  --in->left;
}

typedef struct {
  long cancelled_receives, cancelled_sends, probes;
} Counters;

// One phase of receives of one shape, posted at once, some cancelled, then checked in posting
// order. Returns how many it received. Counts per pattern never exceed what is left for it, so
// whatever the arrival order every receive that is not cancelled completes.
static void receive_phase(long round, Inbox* in, MPI_Comm comm, Random* r, Counters* counters) {
  const int shape = (int)below(r, 4);
  const int want = 1 + (int)below(r, (uint64_t)in->left);
  int* sources = malloc(sizeof(int) * (size_t)want);
  int* tags = malloc(sizeof(int) * (size_t)want);
  int posted = 0;
  // Reservations per pattern: pick concrete messages left (distinct), and keep per-pattern counts
  // within what is left for that pattern.
  int* picked = calloc((size_t)in->count, sizeof(int));
  for (int k = 0; k < want; ++k) {
    int choice = (int)below(r, (uint64_t)in->count);
    int found = -1;
    for (int step = 0; step < in->count; ++step) {
      const int i = (choice + step) % in->count;
      if (!in->list[i].taken && !picked[i]) {
        found = i;
        break;
      }
    }
    if (found < 0) break;
    picked[found] = 1;
    sources[posted] = (shape == 0 || shape == 1) ? in->list[found].sender : MPI_ANY_SOURCE;
    tags[posted] = (shape == 0 || shape == 2) ? in->list[found].tag : MPI_ANY_TAG;
    ++posted;
  }
  free(picked);
  unsigned char** buffers = malloc(sizeof(void*) * (size_t)(posted + 1));
  MPI_Request* requests = malloc(sizeof(MPI_Request) * (size_t)(posted + 1));
  MPI_Status* statuses = malloc(sizeof(MPI_Status) * (size_t)(posted + 1));
  for (int k = 0; k < posted; ++k) {
    buffers[k] = malloc(max_size > 0 ? max_size : 1);
    MPI_Irecv(buffers[k], (int)max_size, MPI_BYTE, sources[k], tags[k], comm, &requests[k]);
  }
  // A receive nothing can match: its cancel must succeed.
  unsigned char spare;
  MPI_Irecv(&spare, 1, MPI_BYTE, MPI_ANY_SOURCE, kUnusedTag, comm, &requests[posted]);
  MPI_Cancel(&requests[posted]);
  // Cancels racing with matching: either outcome is right, and a cancelled receive took nothing.
  for (int k = 0; k < posted; ++k) {
    if (below(r, 8) == 0) MPI_Cancel(&requests[k]);
  }
  MPI_Waitall(posted + 1, requests, statuses);
  int cancelled = 0;
  MPI_Test_cancelled(&statuses[posted], &cancelled);
  if (!cancelled) fail(round, "a receive for a tag nobody sends was not cancelled");
  char how[96];
  snprintf(how, sizeof how, "%s receive", shape_name[shape]);
  for (int k = 0; k < posted; ++k) {
    MPI_Test_cancelled(&statuses[k], &cancelled);
    if (cancelled) {
      ++counters->cancelled_receives;
    } else {
      account(round, in, sources[k], tags[k], &statuses[k], buffers[k], how);
    }
    free(buffers[k]);
  }
  free(buffers);
  free(requests);
  free(statuses);
  free(sources);
  free(tags);
}

// Probes with a random shape, then a receive of what was probed (MPI_Recv of the probed source
// and tag, or MPI_Mrecv of the matched message).
static void probe_phase(long round, Inbox* in, MPI_Comm comm, Random* r, Counters* counters) {
  const int times = 1 + (int)below(r, (uint64_t)(in->left < 4 ? in->left : 4));
  for (int t = 0; t < times && in->left > 0; ++t) {
    // A pattern some message left matches.
    Expected* e = NULL;
    for (int i = (int)below(r, (uint64_t)in->count), step = 0; step < in->count; ++step) {
      Expected* c = &in->list[(i + step) % in->count];
      if (!c->taken) {
        e = c;
        break;
      }
    }
    const int shape = (int)below(r, 4);
    const int source = (shape == 0 || shape == 1) ? e->sender : MPI_ANY_SOURCE;
    const int tag = (shape == 0 || shape == 2) ? e->tag : MPI_ANY_TAG;
    const int how_probe = (int)below(r, 3);
    MPI_Status status;
    MPI_Message message = MPI_MESSAGE_NULL;
    int flag = 0;
    if (how_probe == 0) {
      MPI_Probe(source, tag, comm, &status);
    } else if (how_probe == 1) {
      while (!flag) MPI_Iprobe(source, tag, comm, &flag, &status);
    } else {
      while (!flag) MPI_Improbe(source, tag, comm, &flag, &message, &status);
    }
    ++counters->probes;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    unsigned char* data = malloc(count > 0 ? (size_t)count : 1);
    MPI_Status received;
    if (message != MPI_MESSAGE_NULL) {
      MPI_Mrecv(data, count, MPI_BYTE, &message, &received);
    } else {
      MPI_Recv(data, count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm, &received);
    }
    if (received.MPI_SOURCE != status.MPI_SOURCE || received.MPI_TAG != status.MPI_TAG)
      fail(round, "a probe saw rank %d tag %d, the receive that followed got rank %d tag %d",
           status.MPI_SOURCE, status.MPI_TAG, received.MPI_SOURCE, received.MPI_TAG);
    char how[96];
    snprintf(how, sizeof how, "%s %s", shape_name[shape],
             how_probe == 0   ? "MPI_Probe"
             : how_probe == 1 ? "MPI_Iprobe"
                              : "MPI_Improbe");
    account(round, in, source, tag, &received, data, how);
    free(data);
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  long messages = 20000;
  double seconds = 0;
  int quiet = 0;
  int seeded = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 0);
      seeded = 1;
    } else if (strcmp(argv[i], "--messages") == 0 && i + 1 < argc) {
      messages = strtol(argv[++i], NULL, 0);
    } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = strtod(argv[++i], NULL);
    } else if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc) {
      max_size = strtoull(argv[++i], NULL, 0);
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = 1;
    } else {
      fprintf(stderr,
              "usage: soak [--seed S] [--messages N] [--seconds T] [--max-size BYTES] [--quiet]\n");
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!seeded) seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf(
        "soak: seed %llu, %d ranks, up to %ld messages%s, sizes 0..%zu bytes "
        "(replay: --seed %llu)\n",
        (unsigned long long)seed, size, messages, seconds > 0 ? " or the time limit" : "", max_size,
        (unsigned long long)seed);
    fflush(stdout);
  }
  // Rounds alternate between two communicators: a rank can be one round ahead of another, never
  // two (the round's MPI_Ialltoall waits for everybody), so wildcards never see the next round.
  MPI_Comm traffic[2], cancel_comm, coll;
  MPI_Comm_dup(MPI_COMM_WORLD, &traffic[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &traffic[1]);
  MPI_Comm_dup(MPI_COMM_WORLD, &cancel_comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &coll);

  Planned* plans = malloc(sizeof(Planned) * (size_t)size * kMaxPerRound);
  int* planned = malloc(sizeof(int) * (size_t)size);
  Expected* expected = malloc(sizeof(Expected) * (size_t)size * kMaxPerRound);
  int* survivors = malloc(sizeof(int) * (size_t)size);
  int* incoming = malloc(sizeof(int) * (size_t)size);
  // Per destination: the next sequence number of this rank's cancel sends, and per source the
  // last one received (they increase; gaps are the cancelled ones).
  uint32_t* cancel_sequence = calloc((size_t)size, sizeof(uint32_t));
  int64_t* cancel_last = malloc(sizeof(int64_t) * (size_t)size);
  for (int i = 0; i < size; ++i) cancel_last[i] = -1;
  Counters counters = {0, 0, 0};
  long sent_total = 0, rounds = 0;
  unsigned long long bytes_total = 0;
  const double start = now();
  double last_report = start;  // progress is printed every minute
  int stop = 0;
  for (long round = 0; !stop; ++round) {
    MPI_Comm comm = traffic[round % 2];
    long in_round = 0;
    for (int s = 0; s < size; ++s) {
      planned[s] = plan(round, s, plans + (size_t)s * kMaxPerRound);
      in_round += planned[s];
    }
    // Nonblocking collectives started first and finished last, around all the traffic.
    Random shared = random_for((uint64_t)round, 0xb, 0xc);
    const int root = (int)below(&shared, (uint64_t)size);
    const int bcast_bytes = (int)below(&shared, kBcastMax + 1);
    unsigned char* bcast = malloc((size_t)bcast_bytes + 1);
    if (rank == root) fill(bcast, (size_t)bcast_bytes, round, size + 1, 0);
    MPI_Request colls[2];
    MPI_Ibcast(bcast, bcast_bytes, MPI_BYTE, root, coll, &colls[0]);
    MPI_Request barrier;
    MPI_Ibarrier(coll, &barrier);

    // Sends of this round.
    Planned* mine = plans + (size_t)rank * kMaxPerRound;
    const int count = planned[rank];
    MPI_Request sends[kMaxPerRound];
    unsigned char* send_data[kMaxPerRound];
    unsigned long long bytes_out = 0, bytes_in = 0;
    for (int i = 0; i < count; ++i) {
      send_data[i] = malloc(mine[i].bytes > 0 ? mine[i].bytes : 1);
      fill(send_data[i], mine[i].bytes, round, rank, i);
      bytes_out += mine[i].bytes;
      const int n = (int)mine[i].bytes;
      if (mine[i].mode == 0) {
        MPI_Isend(send_data[i], n, MPI_BYTE, mine[i].dest, mine[i].tag, comm, &sends[i]);
      } else if (mine[i].mode == 1) {
        MPI_Issend(send_data[i], n, MPI_BYTE, mine[i].dest, mine[i].tag, comm, &sends[i]);
      } else {
        MPI_Send_init(send_data[i], n, MPI_BYTE, mine[i].dest, mine[i].tag, comm, &sends[i]);
        MPI_Start(&sends[i]);
      }
    }
    // Sends the sender tries to cancel: small, so that one not cancelled completes eagerly.
    Random own = random_for((uint64_t)round, (uint64_t)rank, 4);
    const int tries = (int)below(&own, kCancelSends + 1);
    MPI_Request cancel_requests[kCancelSends];
    uint32_t cancel_data[kCancelSends][kCancelMaxSize / 4];
    int cancel_dest[kCancelSends];
    for (int i = 0; i < tries; ++i) {
      cancel_dest[i] = (int)below(&own, (uint64_t)size);
      const int words = 1 + (int)below(&own, kCancelMaxSize / 4);
      cancel_data[i][0] = cancel_sequence[cancel_dest[i]]++;
      for (int w = 1; w < words; ++w)
        cancel_data[i][w] = cancel_data[i][0] * 2654435761u + (uint32_t)w;
      MPI_Isend(cancel_data[i], words, MPI_UINT32_T, cancel_dest[i], kCancelTag, cancel_comm,
                &cancel_requests[i]);
    }
    for (int i = 0; i < tries; ++i) {
      if (below(&own, 2) == 0) MPI_Cancel(&cancel_requests[i]);
    }

    // Receives: what the plans send here, in each sender's order.
    Inbox in = {expected, 0, 0};
    for (int s = 0; s < size; ++s) {
      const Planned* theirs = plans + (size_t)s * kMaxPerRound;
      for (int i = 0; i < planned[s]; ++i) {
        if (theirs[i].dest != rank) continue;
        Expected e = {s, i, theirs[i].tag, theirs[i].bytes, 0};
        in.list[in.count++] = e;
        bytes_in += theirs[i].bytes;
      }
    }
    in.left = in.count;
    while (in.left > 0) {
      if (below(&own, 4) == 0) {
        probe_phase(round, &in, comm, &own, &counters);
      } else {
        receive_phase(round, &in, comm, &own, &counters);
      }
      int done = 0;
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    }
    MPI_Waitall(count, sends, MPI_STATUSES_IGNORE);
    for (int i = 0; i < count; ++i) {
      if (mine[i].mode == 2) MPI_Request_free(&sends[i]);
      free(send_data[i]);
    }

    // The cancel sends: how many each destination gets, then those, checked.
    for (int i = 0; i < size; ++i) survivors[i] = 0;
    for (int i = 0; i < tries; ++i) {
      MPI_Status status;
      MPI_Wait(&cancel_requests[i], &status);
      int cancelled = 0;
      MPI_Test_cancelled(&status, &cancelled);
      if (cancelled) {
        ++counters.cancelled_sends;
      } else {
        ++survivors[cancel_dest[i]];
      }
    }
    MPI_Request alltoall;
    MPI_Ialltoall(survivors, 1, MPI_INT, incoming, 1, MPI_INT, coll, &alltoall);
    MPI_Wait(&alltoall, MPI_STATUS_IGNORE);
    for (int s = 0; s < size; ++s) {
      for (int k = 0; k < incoming[s]; ++k) {
        uint32_t data[kCancelMaxSize / 4];
        MPI_Status status;
        MPI_Recv(data, kCancelMaxSize / 4, MPI_UINT32_T, s, kCancelTag, cancel_comm, &status);
        int words = 0;
        MPI_Get_count(&status, MPI_UINT32_T, &words);
        if ((int64_t)data[0] <= cancel_last[s])
          fail(round, "cancel sends from rank %d: number %u came after number %lld", s, data[0],
               (long long)cancel_last[s]);
        cancel_last[s] = data[0];
        for (int w = 1; w < words; ++w) {
          if (data[w] != data[0] * 2654435761u + (uint32_t)w)
            fail(round, "cancel send %u from rank %d: word %d differs", data[0], s, w);
        }
      }
    }

    // Bytes sent and received over the job must agree; the time limit is decided here too, by
    // everyone at once.
    const double elapsed = now() - start;
    unsigned long long sums[3] = {bytes_out, bytes_in,
                                  (seconds > 0 && elapsed >= seconds) ? 1ull : 0ull};
    unsigned long long totals[3];
    MPI_Iallreduce(sums, totals, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, coll, &colls[1]);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
    MPI_Waitall(2, colls, MPI_STATUSES_IGNORE);
    check_content(round, bcast, (size_t)bcast_bytes, size + 1, 0, "MPI_Ibcast");
    free(bcast);
    if (totals[0] != totals[1])
      fail(round, "MPI_Iallreduce: %llu bytes sent but %llu received", totals[0], totals[1]);
    sent_total += in_round;
    bytes_total += totals[0];
    rounds = round + 1;
    stop = (messages > 0 && sent_total >= messages) || totals[2] > 0;
    if (!quiet && rank == 0 && now() - last_report >= 60) {
      last_report = now();
      printf("soak: round %ld, %ld messages, %.1f s\n", rounds, sent_total, last_report - start);
      fflush(stdout);
    }
  }
  // Nothing may be left over: no message of any communicator still waits for a receive.
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm comms[3] = {traffic[0], traffic[1], cancel_comm};
  for (int c = 0; c < 3; ++c) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &flag, &status);
    if (flag)
      fail(rounds, "a message from rank %d tag %d is left over (duplicated)", status.MPI_SOURCE,
           status.MPI_TAG);
  }
  long totals[3] = {counters.cancelled_receives, counters.cancelled_sends, counters.probes};
  long all[3];
  MPI_Reduce(totals, all, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf(
        "soak: seed %llu: %ld rounds, %ld messages, %llu bytes, %ld receives and %ld sends "
        "cancelled, %ld probes, %.1f s: No Errors\n",
        (unsigned long long)seed, rounds, sent_total, bytes_total, all[0], all[1], all[2],
        now() - start);
  }
  for (int c = 0; c < 2; ++c) MPI_Comm_free(&traffic[c]);
  MPI_Comm_free(&cancel_comm);
  MPI_Comm_free(&coll);
  free(plans);
  free(planned);
  free(expected);
  free(survivors);
  free(incoming);
  free(cancel_sequence);
  free(cancel_last);
  MPI_Finalize();
  return 0;
}
