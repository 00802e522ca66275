// From recorded events to tracks of properly nested slices, and the files made of them.
//
// A user thread's spans are cut at each switch: the thread's slice and its open spans end on the
// processor it leaves and start again on the processor it resumes on, so that every track (one
// per virtual processor) nests, whichever processors a thread ran on.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/trace_file.h"

namespace weft::trace {

const char* category_name(std::uint8_t category) noexcept;
// The category a file names ("thread" for a user thread's slice); Category::count if unknown.
std::uint8_t category_of_name(const std::string& name) noexcept;
void write_raw(const ProcessTrace& trace, const std::string& path);

// The category of a user thread's slice on a processor.
inline constexpr std::uint8_t kThreadCategory = 100;

struct Op {
  enum class Kind : std::uint8_t { enter, leave, instant, flow_out, flow_in };
  Kind kind = Kind::enter;
  std::uint64_t time = 0;  // ns from the trace's start
  const std::string* name = nullptr;
  std::uint8_t category = 0;
  std::uint64_t thread = 0;  // the user thread it belongs to (0: none)
  int rank = -1;
  std::int64_t arg = 0;
  std::uint64_t id = 0;  // span: same for every piece of one span; flow: the flow's id
  // A message's flow (arg: the peer's rank in the communicator): its tag, length and
  // communicator (message_comm).
  int tag = 0;
  std::uint64_t bytes = 0;
  std::uint16_t comm = 0;
};

struct Track {
  int process = 0;
  int tid = 0;
  std::string name;
  std::vector<Op> ops;
};

struct Timeline {
  std::uint64_t length_ns = 0;
  std::vector<std::string> process_names;
  std::vector<Track> tracks;
  // Every process's communicators by id, the first process's definition of one kept.
  std::map<std::uint16_t, Communicator> communicators;
  std::deque<std::string> names;                              // what Op::name points at
  std::unordered_map<std::string, const std::string*> index;  // names by text

  const std::string* intern(const std::string& text);
};

Timeline build_timeline(const std::vector<ProcessTrace>& processes);
void write_json(const Timeline& timeline, const std::string& path);
void write_otf2(const Timeline& timeline, const std::string& path);
Timeline read_json(const std::string& path);
Timeline read_otf2(const std::string& path);

}  // namespace weft::trace
