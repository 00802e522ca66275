// A file name every rank of a test job sees alike (made before the job, so the same in every
// process it spreads over), removed when the test ends.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

namespace weft::testing {

class TestFile {
 public:
  // /tmp/<prefix><pid>_<name>: the pid keeps concurrent test programs apart.
  TestFile(const char* prefix, const char* name) : path_("/tmp/") {
    path_.append(prefix).append(std::to_string(::getpid())).append("_").append(name);
    std::remove(path_.c_str());
  }
  ~TestFile() { std::remove(path_.c_str()); }
  TestFile(const TestFile&) = delete;
  TestFile& operator=(const TestFile&) = delete;
  const char* c_str() const { return path_.c_str(); }

 private:
  std::string path_;
};

}  // namespace weft::testing
