// The functions a rank image takes from libweft_rank_libc.a behave as glibc's own: each case runs
// glibc's function and the archive's (loaded from a shared object of the same sources, with its
// own globals) on the same arguments and compares every result, the globals after every call,
// the permuted argv and the messages on stderr.
#include <dlfcn.h>
#include <getopt.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using GetoptLong = int (*)(int, char* const*, const char*, const option*, int*);

// One implementation's functions and globals.
struct Getopt {
  GetoptLong getopt_long;
  GetoptLong getopt_long_only;
  int (*getopt)(int, char* const*, const char*);
  int (*posix_getopt)(int, char* const*, const char*);
  int* optind;
  int* opterr;
  int* optopt;
  char** optarg;
};

void* probe() {
  static void* const handle = ::dlopen(WEFT_RANK_LIBC_PROBE, RTLD_NOW | RTLD_LOCAL);
  return handle;
}

template <class T>
T probe_symbol(const char* name) {
  void* symbol = ::dlsym(probe(), name);
  EXPECT_NE(symbol, nullptr) << name;
  return reinterpret_cast<T>(symbol);
}

Getopt glibc_getopt() {
  return {::getopt_long,
          ::getopt_long_only,
          ::getopt,
          reinterpret_cast<int (*)(int, char* const*, const char*)>(
              ::dlsym(RTLD_DEFAULT, "__posix_getopt")),
          &::optind,
          &::opterr,
          &::optopt,
          &::optarg};
}

Getopt rank_getopt() {
  return {probe_symbol<GetoptLong>("getopt_long"),
          probe_symbol<GetoptLong>("getopt_long_only"),
          probe_symbol<int (*)(int, char* const*, const char*)>("getopt"),
          probe_symbol<int (*)(int, char* const*, const char*)>("__posix_getopt"),
          probe_symbol<int*>("optind"),
          probe_symbol<int*>("opterr"),
          probe_symbol<int*>("optopt"),
          probe_symbol<char**>("optarg")};
}

enum class Kind { plain, posix, long_options, long_only };

struct Case {
  std::vector<std::string> arguments;  // argv[1...]
  const char* optstring;
  Kind kind;
  bool posixly_correct = false;
};

int flag_target = 0;
const option kLongOptions[] = {{"size", required_argument, nullptr, 's'},
                               {"sort", no_argument, nullptr, 'S'},
                               {"verbose", no_argument, nullptr, 'v'},
                               {"version", no_argument, nullptr, 'V'},
                               {"optional", optional_argument, nullptr, 'o'},
                               {"flag", no_argument, &flag_target, 42},
                               {"colour", no_argument, nullptr, 'c'},
                               {"color", no_argument, nullptr, 'c'},
                               {nullptr, 0, nullptr, 0}};

// Runs one case to the end (and once more after optind = 0) and describes everything seen.
std::string run(const Getopt& g, const Case& c) {
  std::vector<std::string> strings = {"prog"};
  strings.insert(strings.end(), c.arguments.begin(), c.arguments.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(strings.size());

  if (c.posixly_correct) ::setenv("POSIXLY_CORRECT", "1", 1);
  // stderr into a file of its own, read back after the run.
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int captured = ::memfd_create("stderr", 0);
  ::dup2(captured, STDERR_FILENO);

  std::string seen;
  for (int pass = 0; pass < 2; ++pass) {
    *g.optind = 0;
    *g.opterr = 1;
    flag_target = 0;
    for (int calls = 0; calls < 64; ++calls) {
      int index = -1;
      int result = 0;
      switch (c.kind) {
        case Kind::plain:
          result = g.getopt(argc, argv.data(), c.optstring);
          break;
        case Kind::posix:
          result = g.posix_getopt(argc, argv.data(), c.optstring);
          break;
        case Kind::long_options:
          result = g.getopt_long(argc, argv.data(), c.optstring, kLongOptions, &index);
          break;
        case Kind::long_only:
          result = g.getopt_long_only(argc, argv.data(), c.optstring, kLongOptions, &index);
          break;
      }
      seen += "[" + std::to_string(result) + " optind " + std::to_string(*g.optind) + " optopt " +
              std::to_string(*g.optopt) + " optarg " + (*g.optarg ? *g.optarg : "(null)") +
              " index " + std::to_string(index) + " flag " + std::to_string(flag_target) + "]";
      if (result == -1) break;
    }
    seen += " argv:";
    for (int i = 0; i < argc; ++i) seen += std::string(" ") + argv[i];
    seen += "\n";
  }

  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  char text[4096];
  const ssize_t got = ::pread(captured, text, sizeof text, 0);
  ::close(captured);
  if (c.posixly_correct) ::unsetenv("POSIXLY_CORRECT");
  return seen + "stderr: " + std::string(text, got > 0 ? static_cast<std::size_t>(got) : 0);
}

const Case kCases[] = {
    {{"-a", "-bfoo", "-b", "bar", "x", "-c", "-cval", "y", "--", "-a"}, "ab:c::", Kind::plain},
    {{"-abz", "-a", "x", "-b"}, "ab:", Kind::plain},
    {{"-a", "x", "-b", "v"}, ":ab:", Kind::plain},
    {{"-x", "-b"}, ":ab:", Kind::plain},
    {{"-a", "x", "-b", "y"}, "+ab", Kind::plain},
    {{"-a", "x", "-b", "y", "-"}, "-ab", Kind::plain},
    {{"-a", "x", "-b", "y"}, "ab", Kind::plain, true},
    {{"-a", "x", "-b", "y"}, "ab", Kind::posix},
    {{"-a:", "-;"}, "a", Kind::plain},
    {{"--size=3", "--size", "4", "--si", "5", "--so", "x", "--verb", "--flag", "-a"},
     "a",
     Kind::long_options},
    {{"--s", "--ver", "--col", "--verbose=1", "--optional", "--optional=x", "--unknown"},
     "a",
     Kind::long_options},
    {{"--size"}, ":a", Kind::long_options},
    {{"--size"}, "a", Kind::long_options},
    {{"x", "--", "--size"}, "a", Kind::long_options},
    {{"-size=3", "-s", "-sort", "-verb", "-a", "-x", "-ve", "--flag", "-o"}, "as", Kind::long_only},
    {{"-W", "size=3", "-Wsort", "-W", "-W"}, "aW;", Kind::long_options},
    {{"-Wunknown", "-Wver"}, "aW;", Kind::long_options},
};

class Getopts : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Getopts, AsGlibcDoes) {
  ASSERT_NE(probe(), nullptr) << ::dlerror();
  const Case& c = kCases[GetParam()];
  EXPECT_EQ(run(rank_getopt(), c), run(glibc_getopt(), c));
}

INSTANTIATE_TEST_SUITE_P(Cases, Getopts,
                         ::testing::Range<std::size_t>(0, sizeof kCases / sizeof kCases[0]));

TEST(Generators, DrawAsGlibcDoes) {
  ASSERT_NE(probe(), nullptr) << ::dlerror();
  auto rank_rand = probe_symbol<int (*)()>("rand");
  auto rank_srand = probe_symbol<void (*)(unsigned)>("srand");
  auto rank_lrand48 = probe_symbol<long (*)()>("lrand48");
  auto rank_drand48 = probe_symbol<double (*)()>("drand48");
  auto rank_srand48 = probe_symbol<void (*)(long)>("srand48");
  auto rank_initstate = probe_symbol<char* (*)(unsigned, char*, size_t)>("initstate");
  auto rank_setstate = probe_symbol<char* (*)(char*)>("setstate");
  auto rank_random = probe_symbol<long (*)()>("random");
  // Unseeded, both start as if seeded with 1; seeded, both follow the seed.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rank_rand(), ::rand());
  ::srand(77);
  rank_srand(77);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rank_rand(), ::rand());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rank_lrand48(), ::lrand48());
  ::srand48(9);
  rank_srand48(9);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(rank_lrand48(), ::lrand48());
    EXPECT_EQ(rank_drand48(), ::drand48());
  }
  // A small state of the caller's, then the default one back.
  char glibc_state[32], rank_state[32];
  char* glibc_default = ::initstate(3, glibc_state, sizeof glibc_state);
  char* rank_default = rank_initstate(3, rank_state, sizeof rank_state);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rank_random(), ::random());
  ::setstate(glibc_default);
  rank_setstate(rank_default);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rank_random(), ::random());
}

TEST(Time, TextAsGlibcDoes) {
  ASSERT_NE(probe(), nullptr) << ::dlerror();
  auto rank_gmtime = probe_symbol<tm* (*)(const time_t*)>("gmtime");
  auto rank_asctime = probe_symbol<char* (*)(const tm*)>("asctime");
  auto rank_ctime = probe_symbol<char* (*)(const time_t*)>("ctime");
  for (const time_t when : {time_t{0}, time_t{951782400}, time_t{4102444799}}) {
    EXPECT_STREQ(rank_asctime(rank_gmtime(&when)), std::string(::asctime(::gmtime(&when))).c_str());
    EXPECT_STREQ(rank_ctime(&when), std::string(::ctime(&when)).c_str());
  }
  tm odd{};
  odd.tm_wday = 9;
  odd.tm_mon = -1;
  odd.tm_year = 100000;
  EXPECT_STREQ(rank_asctime(&odd), std::string(::asctime(&odd)).c_str());
  auto rank_ecvt = probe_symbol<char* (*)(double, int, int*, int*)>("ecvt");
  auto rank_fcvt = probe_symbol<char* (*)(double, int, int*, int*)>("fcvt");
  for (const double value : {0.0, -3.25, 1e300, 123456.789}) {
    int glibc_point = 0, glibc_sign = 0, rank_point = 0, rank_sign = 0;
    const std::string e = ::ecvt(value, 10, &glibc_point, &glibc_sign);
    EXPECT_EQ(rank_ecvt(value, 10, &rank_point, &rank_sign), e);
    EXPECT_EQ(rank_point, glibc_point);
    EXPECT_EQ(rank_sign, glibc_sign);
    const std::string f = ::fcvt(value, 5, &glibc_point, &glibc_sign);
    EXPECT_EQ(rank_fcvt(value, 5, &rank_point, &rank_sign), f);
    EXPECT_EQ(rank_point, glibc_point);
  }
}

}  // namespace
