// The Chrome / Perfetto trace-event format: B/E slices per (pid, tid), instants, flows (s/f).
// The reader takes back what the writer writes, for weft-info trace-summary.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "trace_write.h"
#include "weft/error.h"

namespace weft::trace {
namespace {

void put_string(std::ostream& out, const std::string& text) {
  out << '"';
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out << escaped;
    } else {
      out << c;
    }
  }
  out << '"';
}

void put_time(std::ostream& out, std::uint64_t ns) {
  out << ns / 1000 << '.';
  const unsigned rest = static_cast<unsigned>(ns % 1000);
  out << static_cast<char>('0' + rest / 100) << static_cast<char>('0' + rest / 10 % 10)
      << static_cast<char>('0' + rest % 10);
}

const char* category_of(std::uint8_t category) {
  return category == kThreadCategory ? "thread" : category_name(category);
}

// A JSON value, enough of one for the files written above.
struct Value {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  double number = 0;
  std::string text;
  std::vector<Value> items;
  // An object's members: keys[i] names values[i] (a vector of pairs would need Value complete).
  std::vector<std::string> keys;
  std::vector<Value> values;

  const Value* find(std::string_view key) const {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return &values[i];
    }
    return nullptr;
  }
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  Value parse() {
    Value value = parse_value();
    skip();
    if (pos_ != text_.size()) fail("text after the end of the JSON value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw Error(path_ + " is not a JSON trace: " + what + " at byte " + std::to_string(pos_));
  }
  void skip() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]) != nullptr) ++pos_;
  }
  char peek() {
    skip();
    if (pos_ >= text_.size()) fail("unexpected end");
    return text_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    expect('"');
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) fail("unterminated escape");
        char e = text_[pos_++];
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'u': {
            if (pos_ + 4 > text_.size()) fail("short \\u escape");
            unsigned code = 0;
            std::from_chars(text_.data() + pos_, text_.data() + pos_ + 4, code, 16);
            pos_ += 4;
            out += code < 0x80 ? static_cast<char>(code) : '?';
            break;
          }
          default:
            out += e;
        }
      } else {
        out += c;
      }
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }
  Value parse_value() {
    Value value;
    const char c = peek();
    if (c == '{') {
      value.kind = Value::Kind::object;
      ++pos_;
      if (peek() == '}') {
        ++pos_;
        return value;
      }
      for (;;) {
        std::string key = parse_string();
        expect(':');
        value.keys.push_back(std::move(key));
        value.values.push_back(parse_value());
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect('}');
        return value;
      }
    }
    if (c == '[') {
      value.kind = Value::Kind::array;
      ++pos_;
      if (peek() == ']') {
        ++pos_;
        return value;
      }
      for (;;) {
        value.items.push_back(parse_value());
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect(']');
        return value;
      }
    }
    if (c == '"') {
      value.kind = Value::Kind::string;
      value.text = parse_string();
      return value;
    }
    for (std::string_view word : {"true", "false", "null"}) {
      if (text_.compare(pos_, word.size(), word) == 0) {
        pos_ += word.size();
        value.kind = word == "null" ? Value::Kind::null : Value::Kind::boolean;
        value.number = word == "true";
        return value;
      }
    }
    const char* begin = text_.data() + pos_;
    char* end = nullptr;
    value.number = std::strtod(begin, &end);
    if (end == begin) fail("not a value");
    pos_ += static_cast<std::size_t>(end - begin);
    value.kind = Value::Kind::number;
    return value;
  }

  const std::string& text_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

}  // namespace

void write_json(const Timeline& timeline, const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw Error("cannot create " + path + ": " + std::strerror(errno));
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto next = [&]() -> std::ostream& {
    if (!first) out << ",\n";
    first = false;
    return out;
  };
  std::map<int, bool> named;
  for (const Track& track : timeline.tracks) {
    if (!named[track.process]) {
      named[track.process] = true;
      next() << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << track.process
             << ",\"args\":{\"name\":";
      put_string(out, static_cast<std::size_t>(track.process) < timeline.process_names.size()
                          ? timeline.process_names[static_cast<std::size_t>(track.process)]
                          : "process " + std::to_string(track.process));
      out << "}}";
    }
    next() << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << track.process
           << ",\"tid\":" << track.tid << ",\"args\":{\"name\":";
    put_string(out, track.name);
    out << "}}";
    next() << "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" << track.process
           << ",\"tid\":" << track.tid << ",\"args\":{\"sort_index\":" << track.tid << "}}";
  }
  for (const Track& track : timeline.tracks) {
    for (const Op& op : track.ops) {
      std::ostream& o = next();
      o << "{\"pid\":" << track.process << ",\"tid\":" << track.tid << ",\"ts\":";
      put_time(o, op.time);
      switch (op.kind) {
        case Op::Kind::enter:
          o << ",\"ph\":\"B\",\"name\":";
          put_string(o, *op.name);
          o << ",\"cat\":\"" << category_of(op.category) << "\",\"args\":{\"thread\":" << op.thread
            << ",\"rank\":" << op.rank << ",\"arg\":" << op.arg << ",\"span\":" << op.id << "}}";
          break;
        case Op::Kind::leave:
          o << ",\"ph\":\"E\"}";
          break;
        case Op::Kind::instant:
          o << ",\"ph\":\"i\",\"s\":\"t\",\"name\":";
          put_string(o, *op.name);
          o << ",\"cat\":\"" << category_of(op.category) << "\",\"args\":{\"arg\":" << op.arg
            << "}}";
          break;
        case Op::Kind::flow_out:
        case Op::Kind::flow_in:
          o << ",\"ph\":\"" << (op.kind == Op::Kind::flow_out ? "s" : "f")
            << "\",\"bp\":\"e\",\"id\":" << op.id << ",\"name\":";
          put_string(o, *op.name);
          o << ",\"cat\":\"" << category_of(op.category) << "\",\"args\":{\"peer\":" << op.arg;
          if (op.category == static_cast<std::uint8_t>(Category::message)) {
            o << ",\"tag\":" << op.tag << ",\"bytes\":" << op.bytes << ",\"comm\":" << op.comm;
          }
          o << "}}";
          break;
      }
    }
  }
  out << "\n]}\n";
  out.close();
  if (!out) throw Error("cannot write " + path);
}

Timeline read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path + ": " + std::strerror(errno));
  std::stringstream content;
  content << in.rdbuf();
  const std::string text = content.str();
  const Value root = Parser(text, path).parse();
  const Value* events = root.find("traceEvents");
  if (events == nullptr || events->kind != Value::Kind::array) {
    throw Error(path + " is not a JSON trace: no traceEvents list");
  }
  Timeline timeline;
  std::map<std::pair<int, int>, std::size_t> tracks;
  auto track_of = [&](int pid, int tid) -> Track& {
    auto [it, added] = tracks.emplace(std::make_pair(pid, tid), timeline.tracks.size());
    if (added) {
      timeline.tracks.emplace_back();
      timeline.tracks.back().process = pid;
      timeline.tracks.back().tid = tid;
    }
    return timeline.tracks[it->second];
  };
  auto number = [](const Value& object, std::string_view key) -> double {
    const Value* v = object.find(key);
    return v != nullptr && v->kind == Value::Kind::number ? v->number : 0;
  };
  auto string = [](const Value& object, std::string_view key) -> std::string {
    const Value* v = object.find(key);
    return v != nullptr && v->kind == Value::Kind::string ? v->text : std::string();
  };
  for (const Value& event : events->items) {
    const std::string ph = string(event, "ph");
    const int pid = static_cast<int>(number(event, "pid"));
    const int tid = static_cast<int>(number(event, "tid"));
    const Value* args = event.find("args");
    if (ph == "M") {
      const std::string name = args != nullptr ? string(*args, "name") : "";
      if (string(event, "name") == "thread_name") track_of(pid, tid).name = name;
      if (string(event, "name") == "process_name") {
        if (timeline.process_names.size() <= static_cast<std::size_t>(pid)) {
          timeline.process_names.resize(static_cast<std::size_t>(pid) + 1);
        }
        timeline.process_names[static_cast<std::size_t>(pid)] = name;
      }
      continue;
    }
    if (ph != "B" && ph != "E") continue;
    Op op;
    op.kind = ph == "B" ? Op::Kind::enter : Op::Kind::leave;
    op.time = static_cast<std::uint64_t>(number(event, "ts") * 1000 + 0.5);
    if (op.kind == Op::Kind::enter) {
      op.name = timeline.intern(string(event, "name"));
      const std::string cat = string(event, "cat");
      op.category = category_of_name(cat);
      if (args != nullptr) {
        op.thread = static_cast<std::uint64_t>(number(*args, "thread"));
        op.rank = static_cast<int>(number(*args, "rank"));
        op.id = static_cast<std::uint64_t>(number(*args, "span"));
      }
    }
    Track& track = track_of(pid, tid);
    if (!track.ops.empty() && track.ops.back().time > op.time) {
      throw Error(path + ": events of track " + std::to_string(pid) + "/" + std::to_string(tid) +
                  " go back in time");
    }
    track.ops.push_back(op);
    timeline.length_ns = std::max(timeline.length_ns, op.time);
  }
  return timeline;
}

}  // namespace weft::trace
