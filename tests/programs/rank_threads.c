/* Threads a rank starts are the rank's for MPI, as threads of an MPI process are: MPI_Init_thread
 * provides MPI_THREAD_MULTIPLE; each rank starts threads with pthread_create and C11 thrd_create,
 * and each thread, on a communicator of its own, exchanges messages around the ring and
 * reduces, while the others do; one pthread starts another that does the same. The threads of a
 * rank share its privatized globals (a counter every thread adds to under a mutex) and its rand
 * generator: after srand(5) in the rank, the numbers its threads draw, one at a time, are the
 * rank's sequence. Exits 1 with a message naming the rank on any difference. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>

enum { kPthreads = 3, kThreads = kPthreads + 2 /* a thrd_create thread, a nested pthread */ };

static int rank, size;
static int failures; /* of the rank: its copy of the program */
static MPI_Comm comms[kThreads];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int work_done;
static int draws[kThreads];

static void fail(const char* what, int thread, long got, long expected) {
  pthread_mutex_lock(&lock);
  fprintf(stderr, "rank %d, thread %d: %s is %ld; expected %ld\n", rank, thread, what, got,
          expected);
  ++failures;
  pthread_mutex_unlock(&lock);
}

static void work(int thread) {
  int me = -1;
  MPI_Comm_rank(comms[thread], &me);
  if (me != rank) fail("MPI_Comm_rank", thread, me, rank);
  for (int round = 0; round < 20; ++round) {
    const int sent = rank * 100 + round;
    int got = -1;
    const int from = (rank + size - 1) % size;
    MPI_Sendrecv(&sent, 1, MPI_INT, (rank + 1) % size, round, &got, 1, MPI_INT, from, round,
                 comms[thread], MPI_STATUS_IGNORE);
    if (got != from * 100 + round)
      fail("a message around the ring", thread, got, from * 100 + round);
    int sum = 0;
    MPI_Allreduce(&sent, &sum, 1, MPI_INT, MPI_SUM, comms[thread]);
    const int expected = 100 * size * (size - 1) / 2 + size * round;
    if (sum != expected) fail("MPI_Allreduce's sum", thread, sum, expected);
  }
  pthread_mutex_lock(&lock);
  ++work_done;
  draws[thread] = rand();
  pthread_mutex_unlock(&lock);
}

static void* nested(void* argument) {
  work((int)(long)argument);
  return NULL;
}

static void* from_pthread(void* argument) {
  const int thread = (int)(long)argument;
  if (thread == 0) {
    /* This thread starts one more: it belongs to the rank as well. */
    pthread_t inner;
    pthread_create(&inner, NULL, nested, (void*)(long)(kThreads - 1));
    work(thread);
    pthread_join(inner, NULL);
    return NULL;
  }
  work(thread);
  return NULL;
}

static int from_thrd(void* argument) {
  work((int)(long)argument);
  return 7;
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided != MPI_THREAD_MULTIPLE)
    fail("the thread level provided", -1, provided, MPI_THREAD_MULTIPLE);
  for (int t = 0; t < kThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  srand(5);

  pthread_t pthreads[kPthreads];
  for (long t = 0; t < kPthreads; ++t) pthread_create(&pthreads[t], NULL, from_pthread, (void*)t);
  thrd_t c11;
  if (thrd_create(&c11, from_thrd, (void*)(long)kPthreads) != thrd_success) {
    fail("thrd_create", kPthreads, 1, 0);
  }
  for (int t = 0; t < kPthreads; ++t) pthread_join(pthreads[t], NULL);
  int result = 0;
  thrd_join(c11, &result);
  if (result != 7) fail("thrd_join's result", kPthreads, result, 7);
  if (work_done != kThreads) fail("threads that did their work", -1, work_done, kThreads);

  /* The rank's threads drew the first kThreads numbers of its sequence, in some order. */
  srand(5);
  for (int i = 0; i < kThreads; ++i) {
    const int expected = rand();
    int found = 0;
    for (int t = 0; t < kThreads; ++t) found += draws[t] == expected;
    if (found != 1) fail("threads that drew the rank's next number", i, found, 1);
  }
  for (int t = 0; t < kThreads; ++t) MPI_Comm_free(&comms[t]);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
