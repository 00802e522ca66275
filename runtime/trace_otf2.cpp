// The OTF2 archive (Score-P's format, read by Vampir): one location per track (a virtual
// processor of some process, or another kernel thread), one location group per process, regions
// for user threads' slices and for spans, timestamps in ns.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "trace_write.h"
#include "weft/error.h"

#if WEFT_HAVE_OTF2
#include <otf2/otf2.h>
#endif

namespace weft::trace {

#if WEFT_HAVE_OTF2
namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
const OTF2_FlushCallbacks kFlush = {&pre_flush, &post_flush};

void check(OTF2_ErrorCode code, const char* what) {
  if (code != OTF2_SUCCESS) {
    throw Error(std::string("OTF2: ") + what + ": " + OTF2_Error_GetDescription(code));
  }
}

struct ArchivePath {
  std::string directory;
  std::string name;
};
ArchivePath split(const std::string& path) {
  std::filesystem::path file(path);
  if (file.extension() != ".otf2") throw Error("an OTF2 trace's name must end in .otf2: " + path);
  std::string directory = file.parent_path().string();
  return {directory.empty() ? "." : directory, file.stem().string()};
}

// MPI ranks as OTF2 expects them: a COMM_LOCATIONS group whose i-th member is world rank i's
// location (a rank is a user thread and may move between virtual processors: the one it first ran
// on), then each communicator's group of world ranks (indices into it): MPI_COMM_WORLD's every
// world rank, MPI_COMM_SELF's the one COMM_SELF group, an intercommunicator's two groups. A
// communicator named by messages but never defined (made before the trace began) has no group.
template <typename String>
void write_comm_definitions(OTF2_GlobalDefWriter* defs, const Timeline& timeline,
                            const std::map<int, std::uint64_t>& rank_locations,
                            const std::map<std::uint16_t, OTF2_CommRef>& comms, String&& string) {
  std::size_t ranks = rank_locations.empty() ? 0 : rank_locations.rbegin()->first + 1;
  for (const auto& [id, comm] : timeline.communicators) {
    for (const std::vector<int>* group : {&comm.members, &comm.remote}) {
      for (int rank : *group) ranks = std::max(ranks, static_cast<std::size_t>(rank) + 1);
    }
  }
  std::vector<std::uint64_t> locations(ranks, 0);
  for (const auto& [rank, track] : rank_locations)
    locations[static_cast<std::size_t>(rank)] = track;
  OTF2_GroupRef groups = 0;
  auto group = [&](const std::string& name, OTF2_GroupType type,
                   const std::vector<std::uint64_t>& members) {
    check(OTF2_GlobalDefWriter_WriteGroup(
              defs, groups, string(name), type, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
              static_cast<std::uint32_t>(members.size()), members.data()),
          "group");
    return groups++;
  };
  auto ranks_of = [](const std::vector<int>& members) {
    return std::vector<std::uint64_t>(members.begin(), members.end());
  };
  group("MPI ranks", OTF2_GROUP_TYPE_COMM_LOCATIONS, locations);
  // The world: every rank the trace saw, unless the job defined it (a spawned job's ranks come
  // after its first world's).
  std::vector<std::uint64_t> world(rank_locations.empty() ? 0 : rank_locations.rbegin()->first + 1);
  for (std::size_t r = 0; r < world.size(); ++r) world[r] = r;
  if (auto it = timeline.communicators.find(0); it != timeline.communicators.end()) {
    world = ranks_of(it->second.members);
  }
  const OTF2_GroupRef world_group = group("MPI_COMM_WORLD", OTF2_GROUP_TYPE_COMM_GROUP, world);
  const OTF2_GroupRef self_group = group("MPI_COMM_SELF", OTF2_GROUP_TYPE_COMM_SELF, {});
  for (const auto& [id, ref] : comms) {
    const std::string name = id == 0   ? "MPI_COMM_WORLD"
                             : id == 1 ? "MPI_COMM_SELF"
                                       : "communicator " + std::to_string(id);
    const auto defined = timeline.communicators.find(id);
    OTF2_GroupRef members = OTF2_UNDEFINED_GROUP;
    if (id == 0) {
      members = world_group;
    } else if (id == 1 || (defined != timeline.communicators.end() && defined->second.self)) {
      members = self_group;
    } else if (defined != timeline.communicators.end()) {
      const Communicator& comm = defined->second;
      members = group(name + (comm.inter ? " (local group)" : ""), OTF2_GROUP_TYPE_COMM_GROUP,
                      ranks_of(comm.members));
      if (comm.inter) {
        const OTF2_GroupRef remote =
            group(name + " (remote group)", OTF2_GROUP_TYPE_COMM_GROUP, ranks_of(comm.remote));
        check(OTF2_GlobalDefWriter_WriteInterComm(defs, ref, string(name), members, remote,
                                                  OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
              "intercommunicator");
        continue;
      }
    }
    check(OTF2_GlobalDefWriter_WriteComm(defs, ref, string(name), members, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE),
          "communicator");
  }
}

}  // namespace

bool otf2_available() noexcept {
  return true;
}

void write_otf2(const Timeline& timeline, const std::string& path) {
  const ArchivePath where = split(path);
  // OTF2 refuses to create an archive over an existing one.
  std::error_code ignored;
  std::filesystem::remove_all(std::filesystem::path(where.directory) / where.name, ignored);
  std::filesystem::remove(path, ignored);
  std::filesystem::remove(std::filesystem::path(where.directory) / (where.name + ".def"), ignored);
  OTF2_Archive* archive =
      OTF2_Archive_Open(where.directory.c_str(), where.name.c_str(), OTF2_FILEMODE_WRITE,
                        1024 * 1024, 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (archive == nullptr) throw Error("OTF2: cannot create the archive " + path);
  struct Closer {
    OTF2_Archive* archive;
    ~Closer() { OTF2_Archive_Close(archive); }
  } closer{archive};
  check(OTF2_Archive_SetFlushCallbacks(archive, &kFlush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
  check(OTF2_Archive_SetCreator(archive, "weft"), "creator");

  // Communicators: MPI_COMM_WORLD, every one the job defined (define_communicator) and any other
  // a message names; refs in the order of their ids. World ranks: each the location its thread
  // first ran on, for the COMM_LOCATIONS group.
  std::set<std::uint16_t> comm_ids{0};
  for (const auto& [id, comm] : timeline.communicators) comm_ids.insert(id);
  std::map<int, std::uint64_t> rank_locations;
  for (std::size_t t = 0; t < timeline.tracks.size(); ++t) {
    for (const Op& op : timeline.tracks[t].ops) {
      if (op.category == kThreadCategory && op.kind == Op::Kind::enter && op.rank >= 0) {
        rank_locations.emplace(op.rank, t);
      }
      if (op.category == static_cast<std::uint8_t>(Category::message) &&
          (op.kind == Op::Kind::flow_out || op.kind == Op::Kind::flow_in)) {
        comm_ids.insert(op.comm);
      }
    }
  }
  std::map<std::uint16_t, OTF2_CommRef> comms;
  for (std::uint16_t id : comm_ids) comms.emplace(id, static_cast<OTF2_CommRef>(comms.size()));

  // Regions: one per (name, category).
  std::map<std::pair<const std::string*, std::uint8_t>, OTF2_RegionRef> regions;
  std::vector<std::uint64_t> event_counts;
  check(OTF2_Archive_OpenEvtFiles(archive), "opening the event files");
  for (std::size_t t = 0; t < timeline.tracks.size(); ++t) {
    const Track& track = timeline.tracks[t];
    OTF2_EvtWriter* writer = OTF2_Archive_GetEvtWriter(archive, t);
    if (writer == nullptr) throw Error("OTF2: no event writer for location " + std::to_string(t));
    std::vector<OTF2_RegionRef> open;
    std::uint64_t count = 0;
    for (const Op& op : track.ops) {
      if (op.kind == Op::Kind::enter) {
        auto [it, added] = regions.emplace(std::make_pair(op.name, op.category),
                                           static_cast<OTF2_RegionRef>(regions.size()));
        check(OTF2_EvtWriter_Enter(writer, nullptr, op.time, it->second), "enter");
        open.push_back(it->second);
        ++count;
      } else if (op.kind == Op::Kind::leave && !open.empty()) {
        check(OTF2_EvtWriter_Leave(writer, nullptr, op.time, open.back()), "leave");
        open.pop_back();
        ++count;
      } else if (op.category == static_cast<std::uint8_t>(Category::message) &&
                 (op.kind == Op::Kind::flow_out || op.kind == Op::Kind::flow_in)) {
        // MpiSend names the receiver, MpiRecv (at the receive's completion) the sender, each by
        // its rank in the communicator.
        const auto peer = static_cast<std::uint32_t>(op.arg);
        const auto tag = static_cast<std::uint32_t>(op.tag);
        if (op.kind == Op::Kind::flow_out) {
          check(
              OTF2_EvtWriter_MpiSend(writer, nullptr, op.time, peer, comms[op.comm], tag, op.bytes),
              "MPI send");
        } else {
          check(
              OTF2_EvtWriter_MpiRecv(writer, nullptr, op.time, peer, comms[op.comm], tag, op.bytes),
              "MPI receive");
        }
        ++count;
      }
    }
    event_counts.push_back(count);
    check(OTF2_Archive_CloseEvtWriter(archive, writer), "closing an event writer");
  }
  check(OTF2_Archive_CloseEvtFiles(archive), "closing the event files");
  check(OTF2_Archive_OpenDefFiles(archive), "opening the definition files");
  for (std::size_t t = 0; t < timeline.tracks.size(); ++t) {
    OTF2_DefWriter* writer = OTF2_Archive_GetDefWriter(archive, t);
    check(OTF2_Archive_CloseDefWriter(archive, writer), "closing a definition writer");
  }
  check(OTF2_Archive_CloseDefFiles(archive), "closing the definition files");

  OTF2_GlobalDefWriter* defs = OTF2_Archive_GetGlobalDefWriter(archive);
  if (defs == nullptr) throw Error("OTF2: no global definition writer");
  OTF2_StringRef strings = 0;
  auto string = [&](const std::string& text) {
    check(OTF2_GlobalDefWriter_WriteString(defs, strings, text.c_str()), "string");
    return strings++;
  };
  check(OTF2_GlobalDefWriter_WriteClockProperties(defs, 1'000'000'000, 0, timeline.length_ns + 1,
                                                  OTF2_UNDEFINED_TIMESTAMP),
        "clock properties");
  const OTF2_StringRef empty = string("");
  // Definitions in the order of their references, as OTF2 readers expect.
  std::vector<std::pair<const std::string*, std::uint8_t>> by_ref(regions.size());
  for (const auto& [key, ref] : regions) by_ref[ref] = key;
  for (OTF2_RegionRef ref = 0; ref < by_ref.size(); ++ref) {
    const auto [name, category] = by_ref[ref];
    const OTF2_StringRef name_ref = string(*name);
    const OTF2_Paradigm paradigm =
        category == static_cast<std::uint8_t>(Category::mpi)   ? OTF2_PARADIGM_MPI
        : category == static_cast<std::uint8_t>(Category::omp) ? OTF2_PARADIGM_OPENMP
                                                               : OTF2_PARADIGM_USER;
    const OTF2_RegionRole role = category == kThreadCategory ? OTF2_REGION_ROLE_TASK
                                 : category == static_cast<std::uint8_t>(Category::omp)
                                     ? OTF2_REGION_ROLE_PARALLEL
                                     : OTF2_REGION_ROLE_FUNCTION;
    check(OTF2_GlobalDefWriter_WriteRegion(
              defs, ref, name_ref, name_ref,
              string(category == kThreadCategory ? "thread" : category_name(category)), role,
              paradigm, OTF2_REGION_FLAG_NONE, empty, 0, 0),
          "region");
  }
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(defs, 0, string("weft job"), string("job"),
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        "system tree node");
  std::map<int, bool> groups;
  for (const Track& track : timeline.tracks) {
    if (groups[track.process]) continue;
    groups[track.process] = true;
    const std::string name = static_cast<std::size_t>(track.process) < timeline.process_names.size()
                                 ? timeline.process_names[static_cast<std::size_t>(track.process)]
                                 : "process " + std::to_string(track.process);
    check(OTF2_GlobalDefWriter_WriteLocationGroup(
              defs, static_cast<OTF2_LocationGroupRef>(track.process), string(name),
              OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
  }
  for (std::size_t t = 0; t < timeline.tracks.size(); ++t) {
    const Track& track = timeline.tracks[t];
    check(OTF2_GlobalDefWriter_WriteLocation(defs, t, string(track.name),
                                             OTF2_LOCATION_TYPE_CPU_THREAD, event_counts[t],
                                             static_cast<OTF2_LocationGroupRef>(track.process)),
          "location");
  }
  write_comm_definitions(defs, timeline, rank_locations, comms, string);
  check(OTF2_Archive_CloseGlobalDefWriter(archive, defs), "closing the global definitions");
}

namespace {

struct ReadState {
  Timeline* timeline;
  std::map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_RegionRef, std::pair<std::string, std::string>> regions;  // name, description
  std::map<OTF2_LocationRef, std::size_t> tracks;
  std::vector<OTF2_LocationRef> locations;
};

OTF2_CallbackCode on_string(void* data, OTF2_StringRef self, const char* text) {
  static_cast<ReadState*>(data)->strings[self] = text;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_region(void* data, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                            OTF2_StringRef description, OTF2_RegionRole, OTF2_Paradigm,
                            OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
  auto* state = static_cast<ReadState*>(data);
  state->regions[self] = {state->strings[name], state->strings[description]};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location_group(void* data, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                    OTF2_LocationGroupType, OTF2_SystemTreeNodeRef,
                                    OTF2_LocationGroupRef) {
  auto* state = static_cast<ReadState*>(data);
  auto& names = state->timeline->process_names;
  if (names.size() <= self) names.resize(self + 1);
  names[self] = state->strings[name];
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location(void* data, OTF2_LocationRef self, OTF2_StringRef name,
                              OTF2_LocationType, uint64_t, OTF2_LocationGroupRef group) {
  auto* state = static_cast<ReadState*>(data);
  state->tracks[self] = state->timeline->tracks.size();
  state->locations.push_back(self);
  Track track;
  track.process = static_cast<int>(group);
  track.tid = static_cast<int>(self);
  track.name = state->strings[name];
  state->timeline->tracks.push_back(std::move(track));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_clock(void* data, uint64_t, uint64_t, uint64_t length, uint64_t) {
  static_cast<ReadState*>(data)->timeline->length_ns = length;
  return OTF2_CALLBACK_SUCCESS;
}

void add(ReadState& state, OTF2_LocationRef location, OTF2_TimeStamp time, OTF2_RegionRef region,
         bool enter) {
  Op op;
  op.kind = enter ? Op::Kind::enter : Op::Kind::leave;
  op.time = time;
  if (enter) {
    const auto& [name, description] = state.regions[region];
    op.name = state.timeline->intern(name);
    op.category = category_of_name(description);
    if (op.category == kThreadCategory && name.starts_with("rank ")) {
      op.rank = std::stoi(name.substr(5));
    }
    op.thread = reinterpret_cast<std::uintptr_t>(op.name);
  }
  state.timeline->tracks[state.tracks[location]].ops.push_back(op);
}
OTF2_CallbackCode on_enter(OTF2_LocationRef location, OTF2_TimeStamp time, void* data,
                           OTF2_AttributeList*, OTF2_RegionRef region) {
  add(*static_cast<ReadState*>(data), location, time, region, true);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef location, OTF2_TimeStamp time, void* data,
                           OTF2_AttributeList*, OTF2_RegionRef region) {
  add(*static_cast<ReadState*>(data), location, time, region, false);
  return OTF2_CALLBACK_SUCCESS;
}

}  // namespace

Timeline read_otf2(const std::string& path) {
  Timeline timeline;
  ReadState state{&timeline, {}, {}, {}, {}};
  OTF2_Reader* reader = OTF2_Reader_Open(path.c_str());
  if (reader == nullptr) throw Error("OTF2: cannot open " + path);
  struct Closer {
    OTF2_Reader* reader;
    ~Closer() { OTF2_Reader_Close(reader); }
  } closer{reader};
  check(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "collective callbacks");
  OTF2_GlobalDefReader* defs = OTF2_Reader_GetGlobalDefReader(reader);
  if (defs == nullptr) throw Error("OTF2: " + path + " has no global definitions");
  OTF2_GlobalDefReaderCallbacks* def_callbacks = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(def_callbacks, &on_string);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(def_callbacks, &on_region);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(def_callbacks, &on_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(def_callbacks, &on_location);
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(def_callbacks, &on_clock);
  OTF2_Reader_RegisterGlobalDefCallbacks(reader, defs, def_callbacks, &state);
  uint64_t read = 0;
  check(OTF2_Reader_ReadAllGlobalDefinitions(reader, defs, &read), "reading the definitions");
  OTF2_GlobalDefReaderCallbacks_Delete(def_callbacks);
  for (OTF2_LocationRef location : state.locations) OTF2_Reader_SelectLocation(reader, location);
  check(OTF2_Reader_OpenEvtFiles(reader), "opening the event files");
  for (OTF2_LocationRef location : state.locations) OTF2_Reader_GetEvtReader(reader, location);
  OTF2_GlobalEvtReader* events = OTF2_Reader_GetGlobalEvtReader(reader);
  OTF2_GlobalEvtReaderCallbacks* event_callbacks = OTF2_GlobalEvtReaderCallbacks_New();
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(event_callbacks, &on_enter);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(event_callbacks, &on_leave);
  OTF2_Reader_RegisterGlobalEvtCallbacks(reader, events, event_callbacks, &state);
  check(OTF2_Reader_ReadAllGlobalEvents(reader, events, &read), "reading the events");
  OTF2_GlobalEvtReaderCallbacks_Delete(event_callbacks);
  OTF2_Reader_CloseGlobalEvtReader(reader, events);
  OTF2_Reader_CloseEvtFiles(reader);
  return timeline;
}

#else

bool otf2_available() noexcept {
  return false;
}
void write_otf2(const Timeline&, const std::string& path) {
  throw Error("cannot write " + path + ": this weft was built without OTF2 (libotf2-trace-dev)");
}
Timeline read_otf2(const std::string& path) {
  throw Error("cannot read " + path + ": this weft was built without OTF2 (libotf2-trace-dev)");
}

#endif

}  // namespace weft::trace
