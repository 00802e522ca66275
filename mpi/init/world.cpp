#include "init/world.h"

#include "transport/transport.h"
#include "weft/this_thread.h"

namespace weft::mpi {

namespace {
World* current_world = nullptr;
}  // namespace

World::World(const RankLayout& layout, int process, std::size_t eager_limit,
             std::int64_t spin_limit_ns)
    : layout_(layout),
      process_(process),
      first_(layout.first_rank(process)),
      local_(layout.ranks_of(process)),
      eager_limit_(eager_limit),
      spin_limit_ns_(spin_limit_ns),
      ranks_(new RankState[static_cast<std::size_t>(local_)]) {
  for (int r = 0; r < local_; ++r) ranks_[r].spin.set_limit(spin_limit_ns);
}

void World::discard_unreceived() {
  for (int r = 0; r < local_; ++r) ranks_[r].engine.discard_unreceived();
}

World::~World() {
  stop_progress();
  discard_unreceived();
}

void World::start_progress(const std::vector<TaskPlace>& places, int num_vps) {
  progress_ = std::make_unique<ProgressThreads>(places, num_vps);
}

void World::stop_progress() {
  progress_.reset();
}

World* world() {
  return current_world;
}

void after_failed_test() {
  if (current_world != nullptr && current_world->transport() != nullptr) {
    current_world->transport()->progress_for_rank();
  }
  this_thread::yield();
}

void set_world(World* world) {
  current_world = world;
}

int caller_world_rank() {
  return this_thread::rank();
}

RankState& caller_state() {
  return current_world->rank(this_thread::rank());
}

}  // namespace weft::mpi
