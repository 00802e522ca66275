/* Processes a weft program starts, and how it ends (tests/tools/process_life_test.cpp):
 *   process_life fork WHERE END   every rank makes a child by fork from WHERE (rank: the rank's
 *                                 thread, worker: an OpenMP worker, pthread: a thread the rank
 *                                 started); the child computes, sleeps, runs a parallel region,
 *                                 then ends by END (return: returns 0 from main, WHERE rank only;
 *                                 exit, _exit, exec: with status 40 + rank); the parent waits
 *                                 for it and checks the status.
 *   process_life spawn WHERE      system, popen and posix_spawn from WHERE (rank or worker):
 *                                 their children run and their statuses and output come back.
 *   process_life core DIR         2 ranks on one core: rank 0 (from its thread, then from an
 *                                 OpenMP worker) starts children by system, popen and posix_spawn
 *                                 that wait until rank 1 has seen them start; rank 1 can only run
 *                                 while rank 0 waits if the wait leaves the core free (a frozen
 *                                 core never ends).
 *   process_life exit THREADS     rank 0's THREADS pthreads and the workers of a parallel region
 *                                 each print a line and call exit(7) at the same moment; rank 0's
 *                                 exit handler takes 200 ms, then prints a line.
 *   process_life exit-staggered THREADS   the same, but pthread 0 alone calls exit(7), and the
 *                                 others call exit(9) while its exit handler runs.
 * Prints " No Errors" from rank 0 when every check passed; a failure names the rank and what. */
#include <errno.h>
#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static int rank, failures;

static void fail(const char* what, long got, long expected) {
  fprintf(stderr, "rank %d: %s is %ld; expected %ld\n", rank, what, got, expected);
  ++failures;
}

/* ---- fork ---- */

static const char* end_by;

/* 0 for a child that returns from main (what hung: a non-zero status ended it through the job's
 * end), else one the parent can tell apart. */
static int expected_status(void) {
  return strcmp(end_by, "return") == 0 ? 0 : 40 + rank;
}

/* What a child of fork does, in whatever thread made it: something of each kind a plain process
 * does, then its end. */
static int child_work(void) {
  long sum = 0;
  for (long i = 1; i <= 100000; ++i) sum += i % 7;
  usleep(1000); /* libweft's sleep: with no scheduler left it is the C library's */
  /* Workers on other cores would never run: the child has no virtual processors. */
  int threads = 0;
#pragma omp parallel num_threads(3) reduction(+ : threads)
  threads += 1;
  if (sum != 300000 || threads < 1) _exit(90);
  const int status = expected_status();
  if (strcmp(end_by, "exit") == 0) exit(status);
  if (strcmp(end_by, "_exit") == 0) _exit(status);
  if (strcmp(end_by, "exec") == 0) {
    char text[64];
    snprintf(text, sizeof text, "exit %d", status);
    execl("/bin/sh", "sh", "-c", text, (char*)NULL);
    _exit(91);
  }
  return status; /* "return": main returns it */
}

static void check_child(pid_t child) {
  if (child < 0) {
    fail("fork's result", child, 0);
    return;
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child)
    fail("waitpid's errno", errno, 0);
  else if (!WIFEXITED(status))
    fail("the child's end (exited)", status, 0);
  else if (WEXITSTATUS(status) != expected_status())
    fail("the child's status", WEXITSTATUS(status), expected_status());
}

static void* fork_in_pthread(void* unused) {
  (void)unused;
  const pid_t child = fork();
  if (child == 0) exit(child_work());
  check_child(child);
  return NULL;
}

static int run_fork(const char* where) {
  if (strcmp(where, "rank") == 0) {
    const pid_t child = fork();
    if (child == 0) return child_work();
    check_child(child);
  } else if (strcmp(where, "worker") == 0) {
#pragma omp parallel num_threads(3)
    if (omp_get_thread_num() == 2) {
      const pid_t child = fork();
      if (child == 0) exit(child_work());
      check_child(child);
    }
  } else {
    pthread_t thread;
    pthread_create(&thread, NULL, fork_in_pthread, NULL);
    pthread_join(thread, NULL);
  }
  return -1;
}

/* ---- system, popen, posix_spawn ---- */

static int spawn_shell(const char* command) {
  char* argv[] = {"sh", "-c", (char*)command, NULL};
  pid_t child = 0;
  const int error = posix_spawn(&child, "/bin/sh", NULL, NULL, argv, environ);
  if (error != 0) return -error;
  int status = 0;
  if (waitpid(child, &status, 0) != child) return -1000 - errno;
  return status;
}

static void spawn_each(void) {
  int status = system("exit 3");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 3) fail("system's status", status, 3 << 8);
  FILE* pipe = popen("echo child of $PPID", "r");
  char line[128] = "";
  if (pipe == NULL || fgets(line, sizeof line, pipe) == NULL) fail("popen's output lines", 0, 1);
  char expected[128];
  snprintf(expected, sizeof expected, "child of %d\n", (int)getpid());
  if (strcmp(line, expected) != 0) fail("popen's output matching", 0, 1);
  if (pipe != NULL && (status = pclose(pipe)) != 0) fail("pclose's status", status, 0);
  status = spawn_shell("exit 5");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 5) fail("posix_spawn's status", status, 5 << 8);
}

static void run_spawn(const char* where) {
  if (strcmp(where, "rank") == 0) {
    spawn_each();
  } else {
#pragma omp parallel num_threads(2)
    if (omp_get_thread_num() == 1) spawn_each();
  }
}

/* ---- children that wait for another rank of the same core ---- */

static const char* directory;

/* A shell command that marks `name`.started, then waits for `name`.seen (rank 1's). */
static void waiting_command(char* command, size_t size, const char* name) {
  snprintf(command, size,
           "touch %s/%s.started; while [ ! -e %s/%s.seen ]; do sleep 0.01; done; exit 6", directory,
           name, directory, name);
}

static void wait_for_rank_1(const char* name, const char* how) {
  char command[1024];
  waiting_command(command, sizeof command, name);
  int status = -1;
  if (strcmp(how, "system") == 0) {
    status = system(command);
  } else if (strcmp(how, "popen") == 0) {
    FILE* pipe = popen(command, "r");
    status = pipe != NULL ? pclose(pipe) : -1;
  } else {
    status = spawn_shell(command);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 6) fail(name, status, 6 << 8);
}

static const char* const kWays[] = {"system", "popen", "posix_spawn"};

static void rank_0_waits(void) {
  for (int way = 0; way < 3; ++way) {
    char name[64];
    snprintf(name, sizeof name, "rank-%s", kWays[way]);
    wait_for_rank_1(name, kWays[way]);
#pragma omp parallel num_threads(2)
    if (omp_get_thread_num() == 1) {
      snprintf(name, sizeof name, "worker-%s", kWays[way]);
      wait_for_rank_1(name, kWays[way]);
    }
  }
}

/* Rank 1 answers each child in turn, once it has started (rank 0 is inside the call then). */
static void rank_1_answers(void) {
  const char* const whos[] = {"rank", "worker"};
  for (int way = 0; way < 3; ++way) {
    for (int who = 0; who < 2; ++who) {
      char path[1024];
      snprintf(path, sizeof path, "%s/%s-%s.started", directory, whos[who], kWays[way]);
      struct stat info;
      while (stat(path, &info) != 0) usleep(1000);
      snprintf(path, sizeof path, "%s/%s-%s.seen", directory, whos[who], kWays[way]);
      FILE* seen = fopen(path, "w");
      if (seen == NULL)
        fail("creating the .seen file", errno, 0);
      else
        fclose(seen);
    }
  }
}

/* ---- several threads calling exit at once ---- */

/* A barrier for pthreads and OpenMP workers together: a pthread barrier would block the kernel
 * thread of a worker, and with it the other workers of its core. usleep parks a worker. */
static atomic_int ready, expected_ready;
static int staggered;
static atomic_int handler_started;

/* Rank 0's exit handler, slow: in the staggered mode the other threads call exit while it runs. */
static void slow_handler(void) {
  atomic_store(&handler_started, 1);
  usleep(200000);
  printf("exit handler ran\n");
}

static void print_and_exit(long who) {
  printf("thread %ld says goodbye\n", who); /* buffered: stdout is a pipe */
  atomic_fetch_add(&ready, 1);
  while (atomic_load(&ready) < atomic_load(&expected_ready)) usleep(50);
  if (!staggered || who == 0) exit(7);
  while (!atomic_load(&handler_started)) usleep(50);
  exit(9);
}

static void* exiting_pthread(void* who) {
  print_and_exit((long)who);
  return NULL;
}

static void run_exit(int threads) {
  const int workers = 3;
  atexit(slow_handler);
  atomic_store(&expected_ready, threads + workers);
  for (long who = 0; who < threads; ++who) {
    pthread_t thread;
    pthread_create(&thread, NULL, exiting_pthread, (void*)who);
  }
#pragma omp parallel num_threads(workers)
  print_and_exit(1000 + omp_get_thread_num());
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "fork") == 0 && argc == 4) {
    end_by = argv[3];
    const int child_status = run_fork(argv[2]);
    if (child_status >= 0) return child_status; /* the child, returning from main */
  } else if (strcmp(mode, "spawn") == 0 && argc == 3) {
    run_spawn(argv[2]);
  } else if (strcmp(mode, "core") == 0 && argc == 3) {
    directory = argv[2];
    if (rank == 0) rank_0_waits();
    if (rank == 1) rank_1_answers();
  } else if ((strcmp(mode, "exit") == 0 || strcmp(mode, "exit-staggered") == 0) && argc == 3) {
    staggered = strcmp(mode, "exit-staggered") == 0;
    if (rank == 0) run_exit(atoi(argv[2]));
  } else {
    fprintf(stderr,
            "usage: process_life fork rank|worker|pthread return|exit|_exit|exec, "
            "spawn rank|worker, core DIR, exit|exit-staggered THREADS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int total = 0;
  MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0 && total == 0) printf(" No Errors\n");
  return total != 0;
}
