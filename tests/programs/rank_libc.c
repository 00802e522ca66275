/* The C library's hidden state is per rank in a program built by weftcc, as in a process-based
 * MPI. Run as `rank_libc -v --size=8:8 input -n 3 --verb -- -z last`. Every rank takes one step,
 * then waits at a barrier for the others to take theirs, so that with one state for the process
 * each rank would see the others' steps:
 * - getopt_long over its own argv: the options in order, the operands permuted behind them and
 *   optind on the first; then, after optind = 0, getopt over an argv naming the rank, whose
 *   optarg it reads after the barrier;
 * - strtok over a string of its own, one token per step;
 * - rand after srand(42), random after srandom, lrand48 and drand48 after srand48: every rank
 *   draws the sequence a process draws alone, computed with glibc's reentrant functions;
 * - gmtime and asctime of a time of its own, read after the barrier.
 * Exits 1 with a message naming the rank on any difference. */
#define _GNU_SOURCE
#include <getopt.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank;
static int failures;

static void step(void) {
  MPI_Barrier(MPI_COMM_WORLD);
}

static void expect_int(const char* what, long got, long expected) {
  if (got != expected) {
    fprintf(stderr, "rank %d: %s is %ld; expected %ld\n", rank, what, got, expected);
    ++failures;
  }
}

static void expect_text(const char* what, const char* got, const char* expected) {
  if (got == NULL || strcmp(got, expected) != 0) {
    fprintf(stderr, "rank %d: %s is \"%s\"; expected \"%s\"\n", rank, what,
            got != NULL ? got : "(null)", expected);
    ++failures;
  }
}

static void check_getopt_long(int argc, char** argv) {
  static const char* const given[] = {"-v",     "--size=8:8", "input", "-n",  "3",
                                      "--verb", "--",         "-z",    "last"};
  if (argc != 10) {
    fprintf(stderr, "usage: rank_libc -v --size=8:8 input -n 3 --verb -- -z last\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int i = 0; i < 9; ++i) {
    if (strcmp(argv[i + 1], given[i]) != 0) {
      fprintf(stderr, "rank %d: argument %d is %s\n", rank, i + 1, argv[i + 1]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  static const struct option options[] = {{"size", required_argument, NULL, 's'},
                                          {"verbose", no_argument, NULL, 'V'},
                                          {"version", no_argument, NULL, 'E'},
                                          {NULL, 0, NULL, 0}};
  const int expected[] = {'v', 's', 'n', 'V', -1};
  const char* const arguments[] = {NULL, "8:8", "3", NULL, NULL};
  for (int i = 0; i < 5; ++i) {
    const int c = getopt_long(argc, argv, "vn:", options, NULL);
    const char* argument = optarg;
    step();
    expect_int("getopt_long's result", c, expected[i]);
    if (arguments[i] != NULL) expect_text("getopt_long's optarg", argument, arguments[i]);
  }
  expect_int("optind after getopt_long", optind, 7);
  static const char* const permuted[] = {"-v", "--size=8:8", "-n", "3",   "--verb",
                                         "--", "input",      "-z", "last"};
  for (int i = 0; i < 9; ++i) expect_text("a permuted argument", argv[i + 1], permuted[i]);
}

static void check_getopt_rescan(void) {
  char number[16];
  snprintf(number, sizeof number, "%d", rank);
  char* argv[] = {"rank_libc", "-x", "-n", number, "-n", NULL};
  optind = 0;
  opterr = 0;
  const int expected[] = {'?', 'n', ':', -1};
  for (int i = 0; i < 4; ++i) {
    const int c = getopt(5, argv, ":n:");
    const char* argument = optarg;
    const int option = optopt;
    step();
    expect_int("getopt's result", c, expected[i]);
    if (c == 'n') expect_text("getopt's optarg", argument, number);
    if (c == '?') expect_int("optopt of an unknown option", option, 'x');
    if (c == ':') expect_int("optopt of a missing argument", option, 'n');
  }
  expect_int("optind after getopt", optind, 5);
}

static void check_strtok(void) {
  char text[64];
  snprintf(text, sizeof text, "r%d:a,b;c", rank);
  char first[16];
  snprintf(first, sizeof first, "r%d", rank);
  const char* const tokens[] = {first, "a", "b", "c", NULL};
  for (int i = 0; i < 5; ++i) {
    const char* token = strtok(i == 0 ? text : NULL, ":,;");
    step();
    if (tokens[i] == NULL) {
      if (token != NULL) expect_text("strtok past the end", token, "(null)");
    } else {
      expect_text("a token of strtok", token, tokens[i]);
    }
  }
}

static void check_generators(void) {
  enum { kDraws = 6 };
  char state[128];
  struct random_data own = {0};
  initstate_r(1, state, sizeof state, &own);
  srandom_r(42, &own);
  struct drand48_data own48 = {0};
  srand48_r(7, &own48);

  srand(42);
  for (int i = 0; i < kDraws; ++i) {
    const int got = rand();
    step();
    int32_t expected = 0;
    random_r(&own, &expected);
    expect_int("rand after srand(42)", got, expected);
  }
  srandom(42);
  srandom_r(42, &own);
  for (int i = 0; i < kDraws; ++i) {
    const long got = random();
    step();
    int32_t expected = 0;
    random_r(&own, &expected);
    expect_int("random after srandom(42)", got, expected);
  }
  srand48(7);
  for (int i = 0; i < kDraws; ++i) {
    const long got = lrand48();
    const double real = drand48();
    step();
    long expected = 0;
    double expected_real = 0;
    lrand48_r(&own48, &expected);
    drand48_r(&own48, &expected_real);
    expect_int("lrand48 after srand48(7)", got, expected);
    if (real != expected_real) {
      fprintf(stderr, "rank %d: drand48 after srand48(7) is %.17g; expected %.17g\n", rank, real,
              expected_real);
      ++failures;
    }
  }
}

static void check_time(void) {
  /* 2000-01-01 00:00:00 UTC, a Saturday, plus `rank` days. */
  const time_t when = 946684800 + (time_t)rank * 86400;
  const struct tm* tm = gmtime(&when);
  step();
  expect_int("gmtime's day of the month", tm->tm_mday, 1 + rank % 31);
  struct tm own;
  gmtime_r(&when, &own);
  char expected[64];
  strftime(expected, sizeof expected, "%a %b %e %H:%M:%S %Y\n", &own);
  const char* text = asctime(&own);
  step();
  expect_text("asctime", text, expected);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  check_getopt_long(argc, argv);
  check_getopt_rescan();
  check_strtok();
  check_generators();
  check_time();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
