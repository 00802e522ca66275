#include "weft/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "weft/error.h"

namespace weft {
namespace {

// A TOML file that lives as long as the test needs it.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char pattern[] = "/tmp/weft_config_test_XXXXXX";
    int fd = ::mkstemp(pattern);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    path_ = pattern;
    ssize_t written = ::write(fd, text.data(), text.size());
    ::close(fd);
    if (written != static_cast<ssize_t>(text.size())) throw std::runtime_error("write failed");
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The message of the weft::Error `action` throws, or a failure when it throws nothing.
template <typename Action>
std::string error_of(Action action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a weft::Error";
  return {};
}

void expect_contains(const std::string& text, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) {
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' missing from: " << text;
  }
}

std::string set_value(std::string_view key, std::string_view value) {
  Config config;
  config.set(key, value, ConfigSource::command_line, "--set");
  return config.entry(key).value;
}

std::string set_error(std::string_view key, std::string_view value) {
  return error_of([&] {
    Config config;
    config.set(key, value, ConfigSource::command_line, "--set");
  });
}

ConfigOverrides with_settings(std::vector<std::pair<std::string, std::string>> settings) {
  ConfigOverrides overrides;
  overrides.settings = std::move(settings);
  return overrides;
}

TEST(ConfigTest, EveryKeyHasItsDefault) {
  const std::map<std::string, std::string> expected = {
      {"deadlock.report", "on"},
      {"deadlock.timeout", "0"},
      {"io.idle_poll_us", "500"},
      {"io.mode", "auto"},
      {"io.stats", "false"},
      {"io.spare_threads", "32"},
      {"io.switch_poll_us", "20"},
      {"io.threads", "0"},
      {"io.timer_poll_us", "1000"},
      {"mpi.coll_numa", "auto"},
      {"mpi.coll_numa_constants", ""},
      {"mpi.eager_limit", "8K"},
      {"mpi.ranks", "1"},
      {"mpi.remote_eager_limit", "128K"},
      {"mpi.shared_copy_min", "256K"},
      {"placement.cores_per_task", "1"},
      {"placement.progress", "numa"},
      {"placement.tasks", "numa"},
      {"priority.io", "5"},
      {"priority.mpi_task", "4"},
      {"priority.omp_worker", "4"},
      {"priority.progress", "2"},
      {"priority.progress_boost", "6"},
      {"priority.user", "3"},
      {"scheduler.bind", "true"},
      {"scheduler.cores", ""},
      {"scheduler.idle_spin_us", "20"},
      {"scheduler.preempt_ms", "10"},
      {"scheduler.spin_us", "50"},
      {"scheduler.starvation_limit", "32"},
      {"scheduler.vps", "0"},
      {"stack.cache", "256"},
      {"stack.guard", "true"},
      {"stack.io", "256K"},
      {"stack.max_guarded", "0"},
      {"stack.mpi_task", "8M"},
      {"stack.omp_worker", "4M"},
      {"stack.progress", "256K"},
      {"stack.user", "256K"},
      {"topology", ""},
      {"trace.buffer", "256M"},
      {"trace.clock", "auto"},
      {"trace.events", "all"},
      {"trace.file", ""},
      {"trace.format", "auto"},
  };
  Config config;
  std::map<std::string, std::string> actual;
  for (const Config::Entry& entry : config.entries()) {
    actual[entry.key] = entry.value;
    EXPECT_EQ(entry.source, ConfigSource::defaults) << entry.key;
    EXPECT_TRUE(entry.origin.empty()) << entry.key;
    EXPECT_FALSE(entry.doc.empty()) << entry.key;
    EXPECT_FALSE(entry.type.empty()) << entry.key;
  }
  EXPECT_EQ(actual, expected);
}

TEST(ConfigTest, EntriesAreSortedByKey) {
  std::vector<Config::Entry> entries = Config().entries();
  ASSERT_FALSE(entries.empty());
  for (std::size_t i = 1; i < entries.size(); ++i) {
    EXPECT_LT(entries[i - 1].key, entries[i].key);
  }
}

TEST(ConfigTest, TypedAccessorsReadDefaults) {
  Config config;
  EXPECT_EQ(config.get_int("scheduler.starvation_limit"), 32);
  EXPECT_TRUE(config.get_bool("stack.guard"));
  EXPECT_EQ(config.get_size("stack.mpi_task"), 8u << 20);
  EXPECT_EQ(config.get_string("placement.progress"), "numa");
  EXPECT_EQ(config.get_string("topology"), "");
  EXPECT_EQ(config.entry("scheduler.vps").type, "integer 0..4096");
  EXPECT_EQ(config.entry("placement.tasks").type, "one of scatter|numa|compact");
  EXPECT_EQ(config.entry("stack.user").type, "size 16K..1G");
  EXPECT_EQ(config.entry("stack.guard").type, "boolean");
}

TEST(ConfigTest, PerTypeKeysFollowThreadTypes) {
  Config config;
  EXPECT_EQ(config.priority(ThreadType::mpi_task), 4);
  EXPECT_EQ(config.priority(ThreadType::omp_worker), 4);
  EXPECT_EQ(config.priority(ThreadType::progress), 2);
  EXPECT_EQ(config.priority(ThreadType::io), 5);
  EXPECT_EQ(config.priority(ThreadType::user), 3);
  EXPECT_EQ(config.stack_size(ThreadType::mpi_task), 8u << 20);
  EXPECT_EQ(config.stack_size(ThreadType::omp_worker), 4u << 20);
  EXPECT_EQ(config.stack_size(ThreadType::progress), 256u << 10);
  EXPECT_EQ(config.stack_size(ThreadType::io), 256u << 10);
  EXPECT_EQ(config.stack_size(ThreadType::user), 256u << 10);

  config.set("priority.io", "7", ConfigSource::command_line, "--set");
  config.set("stack.io", "1M", ConfigSource::command_line, "--set");
  EXPECT_EQ(config.priority(ThreadType::io), 7);
  EXPECT_EQ(config.stack_size(ThreadType::io), 1u << 20);
}

TEST(ConfigTest, IntegersAcceptTheirRange) {
  EXPECT_EQ(set_value("scheduler.vps", "0"), "0");
  EXPECT_EQ(set_value("scheduler.vps", "4096"), "4096");
  EXPECT_EQ(set_value("scheduler.vps", " 12 "), "12");
  EXPECT_EQ(set_value("scheduler.vps", "+3"), "3");
  EXPECT_EQ(set_value("priority.user", "7"), "7");
}

TEST(ConfigTest, IntegersRefuseOthers) {
  for (std::string_view value :
       {"abc", "4097", "-1", "1.5", "", "3x", "+-3", "99999999999999999999"}) {
    std::string message = set_error("scheduler.vps", value);
    expect_contains(message, {"'scheduler.vps'", "'" + std::string(value) + "'", "(--set)",
                              "expected an integer from 0 to 4096"});
  }
  expect_contains(set_error("priority.progress_boost", "8"),
                  {"'priority.progress_boost'", "'8'", "expected an integer from 0 to 7"});
  expect_contains(set_error("scheduler.starvation_limit", "0"),
                  {"expected an integer from 1 to 1000000"});
}

TEST(ConfigTest, BooleansAcceptEverySpelling) {
  for (std::string_view yes : {"true", "TRUE", "yes", "Yes", "on", "1"}) {
    EXPECT_EQ(set_value("scheduler.bind", yes), "true") << yes;
  }
  for (std::string_view no : {"false", "False", "no", "off", "OFF", "0"}) {
    EXPECT_EQ(set_value("scheduler.bind", no), "false") << no;
  }
}

TEST(ConfigTest, BooleansRefuseOthers) {
  for (std::string_view value : {"maybe", "2", "", "tru"}) {
    expect_contains(set_error("stack.guard", value),
                    {"'stack.guard'", "'" + std::string(value) + "'", "(--set)",
                     "expected a boolean: true/false, yes/no, on/off or 1/0"});
  }
}

TEST(ConfigTest, SizesAcceptBytesAndSuffixes) {
  EXPECT_EQ(set_value("stack.user", "65536"), "64K");
  EXPECT_EQ(set_value("stack.user", "64K"), "64K");
  EXPECT_EQ(set_value("stack.user", "64k"), "64K");
  EXPECT_EQ(set_value("stack.user", "64KiB"), "64K");
  EXPECT_EQ(set_value("stack.user", "64 KiB"), "64K");
  EXPECT_EQ(set_value("stack.user", "8M"), "8M");
  EXPECT_EQ(set_value("stack.user", "8MiB"), "8M");
  EXPECT_EQ(set_value("stack.user", "1G"), "1G");
  EXPECT_EQ(set_value("stack.user", "1024M"), "1G");
  EXPECT_EQ(set_value("stack.user", "16K"), "16K");
  EXPECT_EQ(set_value("stack.user", "100000"), "100000");
  EXPECT_EQ(set_value("stack.user", "100000B"), "100000");

  Config config;
  config.set("stack.omp_worker", "3M", ConfigSource::command_line, "--set");
  EXPECT_EQ(config.get_size("stack.omp_worker"), 3u << 20);
  config.set("stack.omp_worker", "100000", ConfigSource::command_line, "--set");
  EXPECT_EQ(config.get_size("stack.omp_worker"), 100000u);
}

TEST(ConfigTest, SizesRefuseOthers) {
  for (std::string_view value :
       {"15K", "16383", "2G", "1025M", "64KB", "1.5M", "K", "", "-64K", "64Q", "99999999999T"}) {
    expect_contains(set_error("stack.user", value), {"'stack.user'", "'" + std::string(value) + "'",
                                                     "(--set)", "expected a size from 16K to 1G"});
  }
}

TEST(ConfigTest, EnumerationsAcceptTheirNames) {
  EXPECT_EQ(set_value("placement.tasks", "scatter"), "scatter");
  EXPECT_EQ(set_value("placement.tasks", "COMPACT"), "compact");
  EXPECT_EQ(set_value("placement.progress", "dedicated"), "dedicated");
  EXPECT_EQ(set_value("placement.progress", "none"), "none");
}

TEST(ConfigTest, EnumerationsRefuseOthers) {
  expect_contains(
      set_error("placement.tasks", "spread"),
      {"'placement.tasks'", "'spread'", "(--set)", "expected one of scatter, numa, compact"});
  expect_contains(set_error("placement.progress", "colocate"),
                  {"expected one of none, colocated, numa, dedicated"});
}

TEST(ConfigTest, TopologyChecksOnlyItsForm) {
  EXPECT_EQ(set_value("topology", "host"), "host");
  EXPECT_EQ(set_value("topology", ""), "");
  EXPECT_EQ(set_value("topology", "synthetic:pack:2 [numa] core:4 pu:1"),
            "synthetic:pack:2 [numa] core:4 pu:1");
  EXPECT_EQ(set_value("topology", "xml:/tmp/machine.xml"), "xml:/tmp/machine.xml");
  for (std::string_view value : {"synthetic:", "xml:", "numa", "hosts", "pack:2 core:2"}) {
    expect_contains(set_error("topology", value),
                    {"'topology'", "'" + std::string(value) + "'", "(--set)", "host",
                     "synthetic:<hwloc synthetic description>", "xml:<path>"});
  }
}

TEST(ConfigTest, RefusalNamesKeyValueSourceAndExpectation) {
  std::string message = error_of([] { Config::load({}, {"WEFT_SCHEDULER_VPS=abc"}); });
  EXPECT_EQ(message,
            "configuration key 'scheduler.vps' = 'abc' (environment variable WEFT_SCHEDULER_VPS): "
            "expected an integer from 0 to 4096");
}

TEST(ConfigTest, RefusedValueLeavesTheEntryAlone) {
  Config config;
  config.set("scheduler.vps", "8", ConfigSource::file, "a.toml:1");
  EXPECT_THROW(config.set("scheduler.vps", "nope", ConfigSource::command_line, "--set"), Error);
  EXPECT_EQ(config.get_int("scheduler.vps"), 8);
  EXPECT_EQ(config.entry("scheduler.vps").source, ConfigSource::file);
}

TEST(ConfigTest, UnknownKeyOnCommandLineSuggestsTheNearest) {
  EXPECT_EQ(error_of([] {
              Config::load(with_settings({{"scheduler.vp", "2"}}), {});
            }),
            "unknown configuration key 'scheduler.vp' (--set); did you mean 'scheduler.vps'?");
  expect_contains(error_of([] {
                    Config::load(with_settings({{"Stack.Gaurd", "on"}}), {});
                  }),
                  {"'Stack.Gaurd'", "did you mean 'stack.guard'?"});
}

TEST(ConfigTest, UnknownKeyFarFromAnyListsThemAll) {
  std::string message = error_of([] { Config::load(with_settings({{"colour", "blue"}}), {}); });
  expect_contains(message, {"unknown configuration key 'colour' (--set)",
                            "known: ", "placement.tasks", "scheduler.vps", "topology"});
  EXPECT_EQ(message.find("did you mean"), std::string::npos);
}

TEST(ConfigTest, UnknownKeyInFileNamesFileAndLine) {
  TempFile file("[scheduler]\nvps = 2\nvp = 3\n");
  std::string message = error_of([&] { Config::load({file.path(), {}}, {}); });
  expect_contains(message, {"unknown configuration key 'scheduler.vp'", file.path() + ":3",
                            "did you mean 'scheduler.vps'?"});
}

// A site's WEFT_ROOT or a user's WEFT_HOME must not stop a job: unknown variables are ignored,
// with one warning per process that names them (a misspelled key's with its near miss) and lists
// the known ones; the known ones still apply. In a process of its own (re-executed, not forked
// from this one, which may have warned already), loading three times.
TEST(ConfigDeathTest, UnknownEnvironmentVariablesWarnOncePerProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        for (int load = 0; load < 3; ++load) {
          const Config config =
              Config::load({}, {"WEFT_ROOT=/opt/weft", "WEFT_HOME=/home/me", "WEFT_SCHEDULER_VP=2",
                                "WEFT_SCHEDULER_SPIN_US=7"});
          if (config.get_int("scheduler.spin_us") != 7) std::exit(3);
        }
        std::exit(0);
      },
      testing::ExitedWithCode(0),
      "^weft: warning: ignoring environment variables WEFT_ROOT, WEFT_HOME, WEFT_SCHEDULER_VP "
      "\\(did you mean 'WEFT_SCHEDULER_VPS'\\?\\): not configuration variables; known: "
      "WEFT_[^\n]*WEFT_SCHEDULER_SPIN_US, [^\n]*WEFT_TOPOLOGY[^\n]*; weft's tools [^\n]*\n$");
}

TEST(ConfigTest, ToolVariablesAndOthersAreSkipped) {
  Config config =
      Config::load({}, {"WEFT_CC=gcc", "WEFT_CXX=g++", "WEFT_BUILD_DIR=/tmp/b",
                        "WEFT_INTERNAL_RANK=3", "WEFT_INTERNAL_=x", "PATH=/bin", "HOME=/root",
                        "weft_scheduler_vps=abc", "NOEQUALS", "WEFT_CONFIG="});
  for (const Config::Entry& entry : config.entries()) {
    EXPECT_EQ(entry.source, ConfigSource::defaults) << entry.key;
  }
}

TEST(ConfigTest, EnvironmentVariablesNameTheirKeys) {
  Config config = Config::load({}, {"WEFT_SCHEDULER_STARVATION_LIMIT=64", "WEFT_STACK_GUARD=off",
                                    "WEFT_PLACEMENT_TASKS=compact", "WEFT_TOPOLOGY=host",
                                    "WEFT_STACK_MPI_TASK=16M", "WEFT_PRIORITY_PROGRESS_BOOST=7"});
  EXPECT_EQ(config.get_int("scheduler.starvation_limit"), 64);
  EXPECT_FALSE(config.get_bool("stack.guard"));
  EXPECT_EQ(config.get_string("placement.tasks"), "compact");
  EXPECT_EQ(config.get_string("topology"), "host");
  EXPECT_EQ(config.stack_size(ThreadType::mpi_task), 16u << 20);
  EXPECT_EQ(config.get_int("priority.progress_boost"), 7);
  EXPECT_EQ(config.entry("stack.guard").source, ConfigSource::environment);
  EXPECT_EQ(config.entry("stack.guard").origin, "WEFT_STACK_GUARD");
}

TEST(ConfigTest, PrecedenceIsDefaultsFileEnvironmentCommandLine) {
  TempFile file(
      "[scheduler]\n"
      "vps = 2\n"
      "spin_us = 10\n"
      "idle_spin_us = 5\n");
  Config config = Config::load({file.path(), {{"scheduler.vps", "4"}}},
                               {"WEFT_SCHEDULER_VPS=3", "WEFT_SCHEDULER_SPIN_US=11"});

  EXPECT_EQ(config.get_int("scheduler.vps"), 4);
  EXPECT_EQ(config.entry("scheduler.vps").source, ConfigSource::command_line);
  EXPECT_EQ(config.entry("scheduler.vps").origin, "--set");

  EXPECT_EQ(config.get_int("scheduler.spin_us"), 11);
  EXPECT_EQ(config.entry("scheduler.spin_us").source, ConfigSource::environment);
  EXPECT_EQ(config.entry("scheduler.spin_us").origin, "WEFT_SCHEDULER_SPIN_US");

  EXPECT_EQ(config.get_int("scheduler.idle_spin_us"), 5);
  EXPECT_EQ(config.entry("scheduler.idle_spin_us").source, ConfigSource::file);
  EXPECT_EQ(config.entry("scheduler.idle_spin_us").origin, file.path() + ":4");

  EXPECT_EQ(config.get_int("scheduler.starvation_limit"), 32);
  EXPECT_EQ(config.entry("scheduler.starvation_limit").source, ConfigSource::defaults);
}

TEST(ConfigTest, LaterCommandLineSettingWins) {
  Config config = Config::load(with_settings({{"priority.user", "1"}, {"priority.user", "6"}}), {});
  EXPECT_EQ(config.priority(ThreadType::user), 6);
}

TEST(ConfigTest, PrecedenceDoesNotDependOnCallOrder) {
  Config config;
  config.set("scheduler.vps", "4", ConfigSource::command_line, "--set");
  config.load_environment({"WEFT_SCHEDULER_VPS=3"});
  config.load_toml("[scheduler]\nvps = 2\n", "late.toml");
  config.set("scheduler.vps", "1", ConfigSource::defaults);
  EXPECT_EQ(config.get_int("scheduler.vps"), 4);
  EXPECT_EQ(config.entry("scheduler.vps").source, ConfigSource::command_line);
  // A source of lower precedence is still checked.
  EXPECT_THROW(config.load_toml("[scheduler]\nvps = -2\n", "late.toml"), Error);
}

TEST(ConfigTest, WeftConfigNamesTheFile) {
  TempFile file("topology = \"synthetic:pack:2 [numa] core:4 pu:1\"\n[stack]\nuser = \"64K\"\n");
  Config config = Config::load({}, {"WEFT_CONFIG=" + file.path()});
  EXPECT_EQ(config.get_string("topology"), "synthetic:pack:2 [numa] core:4 pu:1");
  EXPECT_EQ(config.stack_size(ThreadType::user), 64u << 10);
  EXPECT_EQ(config.entry("stack.user").source, ConfigSource::file);
  EXPECT_EQ(config.entry("stack.user").origin, file.path() + ":3");
}

TEST(ConfigTest, ConfigOptionWinsOverWeftConfig) {
  TempFile file("[scheduler]\nvps = 6\n");
  Config config = Config::load({file.path(), {}}, {"WEFT_CONFIG=/nonexistent/weft.toml"});
  EXPECT_EQ(config.get_int("scheduler.vps"), 6);
}

TEST(ConfigTest, MissingFileNamesPathAndSource) {
  expect_contains(error_of([] {
                    Config::load({"/nonexistent/a.toml", {}}, {});
                  }),
                  {"/nonexistent/a.toml", "--config", "No such file"});
  expect_contains(error_of([] { Config::load({}, {"WEFT_CONFIG=/nonexistent/b.toml"}); }),
                  {"/nonexistent/b.toml", "environment variable WEFT_CONFIG"});
  expect_contains(error_of([] { Config().load_file("/nonexistent/c.toml"); }),
                  {"/nonexistent/c.toml"});
}

TEST(ConfigTest, TomlSyntaxErrorNamesFileAndLine) {
  TempFile file("[scheduler]\nvps = 2\nbind = = true\n");
  expect_contains(error_of([&] {
                    Config::load({file.path(), {}}, {});
                  }),
                  {"invalid TOML", file.path(), "line 3"});
}

TEST(ConfigTest, TomlTablesAndDottedKeysMapToKeys) {
  Config config;
  config.load_toml(
      "topology = \"host\"\n"
      "scheduler.bind = false\n"
      "[placement]\n"
      "tasks = \"scatter\"\n"
      "cores_per_task = 2\n"
      "[priority]\n"
      "io = 6\n"
      "[stack]\n"
      "user = 65536\n"
      "guard = \"no\"\n"
      "progress = \"512K\"\n"
      "max_guarded = 0x10\n",
      "site.toml");
  EXPECT_EQ(config.get_string("topology"), "host");
  EXPECT_FALSE(config.get_bool("scheduler.bind"));
  EXPECT_FALSE(config.get_bool("stack.guard"));
  EXPECT_EQ(config.get_string("placement.tasks"), "scatter");
  EXPECT_EQ(config.get_int("placement.cores_per_task"), 2);
  EXPECT_EQ(config.priority(ThreadType::io), 6);
  EXPECT_EQ(config.stack_size(ThreadType::user), 65536u);
  EXPECT_EQ(config.stack_size(ThreadType::progress), 512u << 10);
  EXPECT_EQ(config.get_int("stack.max_guarded"), 16);
  EXPECT_EQ(config.entry("placement.tasks").origin, "site.toml:4");
}

TEST(ConfigTest, TomlValueOfTheWrongTypeIsRefused) {
  expect_contains(error_of([] { Config().load_toml("[scheduler]\nvps = 1.5\n", "a.toml"); }),
                  {"'scheduler.vps'", "'1.5'", "file a.toml:2", "expected an integer"});
  expect_contains(error_of([] { Config().load_toml("[stack]\nuser = [1, 2]\n", "a.toml"); }),
                  {"'stack.user'", "file a.toml:2", "expected a size"});
  expect_contains(error_of([] { Config().load_toml("[scheduler.vps]\nx = 1\n", "a.toml"); }),
                  {"'scheduler.vps'", "a.toml", "expected an integer"});
  expect_contains(error_of([] { Config().load_toml("stack = 3\n", "a.toml"); }),
                  {"unknown configuration key 'stack'", "a.toml:1"});
}

TEST(ConfigTest, DescribeShowsValuesAndSources) {
  TempFile file("[stack]\nguard = false\nuser = \"64K\"\n");
  Config config = Config::load({file.path(), {{"scheduler.vps", "4"}}}, {"WEFT_SCHEDULER_BIND=no"});
  std::string text = config.describe();
  expect_contains(text, {"scheduler.vps = 4  (command line: --set)\n",
                         "scheduler.bind = false  (environment: WEFT_SCHEDULER_BIND)\n",
                         "stack.user = 64K  (file: " + file.path() + ":3)\n",
                         "stack.guard = false  (file: " + file.path() + ":2)\n",
                         "topology = \"\"  (default)\n", "stack.mpi_task = 8M  (default)\n"});
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(lines, config.entries().size());
  EXPECT_LT(text.find("placement.tasks"), text.find("scheduler.vps"));
}

TEST(ConfigTest, DocumentationListsEveryKey) {
  std::string text = Config::documentation();
  for (const Config::Entry& entry : Config().entries()) {
    expect_contains(text, {entry.key + "  (" + entry.type, entry.doc});
  }
  expect_contains(text,
                  {"scheduler.vps  (integer 0..4096, default 0, environment "
                   "WEFT_SCHEDULER_VPS)",
                   "stack.mpi_task  (size 16K..1G, default 8M",
                   "placement.progress  (one of none|colocated|numa|dedicated, default numa"});
}

TEST(ConfigTest, AccessorsRefuseUnknownKeysAndWrongTypes) {
  Config config;
  expect_contains(error_of([&] { config.get_int("scheduler.vp"); }),
                  {"get_int", "'scheduler.vp'", "did you mean 'scheduler.vps'?"});
  expect_contains(error_of([&] { config.get_int("stack.guard"); }),
                  {"get_int", "'stack.guard'", "boolean"});
  expect_contains(error_of([&] { config.get_bool("scheduler.vps"); }),
                  {"get_bool", "'scheduler.vps'", "integer"});
  expect_contains(error_of([&] { config.get_size("scheduler.vps"); }),
                  {"get_size", "'scheduler.vps'"});
  expect_contains(error_of([&] { config.get_string("stack.user"); }),
                  {"get_string", "'stack.user'", "size"});
  expect_contains(error_of([&] { config.entry("nothing"); }), {"'nothing'"});
}

TEST(ConfigTest, ParseSettingSplitsAtTheFirstEquals) {
  EXPECT_EQ(Config::parse_setting("scheduler.vps=4"),
            (std::pair<std::string, std::string>("scheduler.vps", "4")));
  EXPECT_EQ(Config::parse_setting("topology=synthetic:a=b"),
            (std::pair<std::string, std::string>("topology", "synthetic:a=b")));
  EXPECT_EQ(Config::parse_setting("topology="),
            (std::pair<std::string, std::string>("topology", "")));
  expect_contains(error_of([] { Config::parse_setting("scheduler.vps"); }),
                  {"key=value", "'scheduler.vps'"});
  expect_contains(error_of([] { Config::parse_setting("=4"); }), {"key=value", "'=4'"});
}

TEST(ConfigTest, SourcesHaveNames) {
  EXPECT_EQ(to_string(ConfigSource::defaults), "default");
  EXPECT_EQ(to_string(ConfigSource::file), "file");
  EXPECT_EQ(to_string(ConfigSource::environment), "environment");
  EXPECT_EQ(to_string(ConfigSource::command_line), "command line");
}

}  // namespace
}  // namespace weft
