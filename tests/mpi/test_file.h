// A file name every rank of a test job sees alike (made before the job, so the same in every
// process it spreads over), removed when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

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

// MPI_File_open of `path` on MPI_COMM_WORLD, created and read-write, with `hints` as its info; the
// test fails, and the handle is MPI_FILE_NULL, when the open fails.
inline MPI_File open_with_hints(const char* path,
                                std::initializer_list<std::pair<const char*, const char*>> hints) {
  MPI_Info info;
  MPI_Info_create(&info);
  for (const auto& [key, value] : hints) MPI_Info_set(info, key, value);
  MPI_File fh = MPI_FILE_NULL;
  EXPECT_EQ(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
            MPI_SUCCESS);
  MPI_Info_free(&info);
  return fh;
}

}  // namespace weft::testing
