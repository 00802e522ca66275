// weftrun's end of the exchange of a job of several processes (weftrun -p): a listening Unix
// socket in a private directory, a random token per job, and a thread that serves put, fence and
// the collection of every process's values. The processes join it through connect_bootstrap
// (weft/bootstrap.h), told where by the variables environment() returns.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace weft {

class BootstrapServer {
 public:
  // Creates the directory (mode 0700, under $TMPDIR or /tmp), the socket and the token, and starts
  // serving `processes` processes. Throws weft::Error naming the call that failed.
  explicit BootstrapServer(int processes);
  // Stops serving and removes whatever is left of the socket and its directory.
  ~BootstrapServer();
  BootstrapServer(const BootstrapServer&) = delete;
  BootstrapServer& operator=(const BootstrapServer&) = delete;

  // "NAME=value" entries that process `process` needs in its environment: the socket's path, the
  // token, its index and the number of processes (WEFT_INTERNAL_BOOTSTRAP_*).
  std::vector<std::string> environment(int process) const;
  // The socket's path. Both it and its directory are removed as soon as every process has joined:
  // nothing can be left behind afterwards, even if weftrun is killed.
  const std::string& socket_path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
