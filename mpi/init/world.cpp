#include "init/world.h"

#include "transport/transport.h"
#include "weft/error.h"
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
      ranks_(new RankState[static_cast<std::size_t>(local_)]),
      spawned_(new std::atomic<RankState*>[kSpawnCapacity]) {
  for (int r = 0; r < local_; ++r) ranks_[r].spin.set_limit(spin_limit_ns);
}

void World::discard_unreceived() {
  for (int r = 0; r < local_; ++r) ranks_[r].engine.discard_unreceived();
  std::lock_guard lock(spawn_lock);
  for (auto& state : spawned_states_) state->engine.discard_unreceived();
}

std::vector<int> World::add_ranks(int count) {
  std::lock_guard lock(spawn_lock);
  const int first = static_cast<int>(spawned_states_.size());
  if (count > kSpawnCapacity - first) {
    throw Error("this process has already started " + std::to_string(first) +
                " ranks by MPI_Comm_spawn and holds at most " + std::to_string(kSpawnCapacity));
  }
  std::vector<int> numbers;
  for (int k = first; k < first + count; ++k) {
    auto state = std::make_unique<RankState>();
    state->spin.set_limit(spin_limit_ns_);
    if (transport_ != nullptr) {
      state->spin.set_progress(
          [](void* t) { return static_cast<Transport*>(t)->progress_for_rank(); }, transport_);
    }
    spawned_[k].store(state.get(), std::memory_order_release);
    spawned_states_.push_back(std::move(state));
    numbers.push_back(size() + process_ + layout_.processes() * k);
  }
  return numbers;
}

void World::keep_spawned(Thread thread, std::shared_ptr<int> status) {
  std::lock_guard lock(spawn_lock);
  spawned_threads_.emplace_back(std::move(thread), std::move(status));
}

int World::join_spawned() {
  int result = 0;
  for (;;) {
    std::vector<std::pair<Thread, std::shared_ptr<int>>> threads;
    {
      std::lock_guard lock(spawn_lock);
      threads.swap(spawned_threads_);
    }
    if (threads.empty()) return result;
    for (auto& [thread, status] : threads) {
      thread.join();
      if (result == 0) result = *status;
    }
  }
}

void World::keep(std::shared_ptr<void> object) {
  std::lock_guard lock(spawn_lock);
  kept_.push_back(std::move(object));
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

MPI_Comm caller_world_comm() {
  const int rank = this_thread::rank();
  if (current_world == nullptr || rank < 0) return MPI_COMM_WORLD;
  const MPI_Comm comm = current_world->rank(rank).world_comm;
  return comm != nullptr ? comm : MPI_COMM_WORLD;
}

MPI_Comm caller_self_comm() {
  const int rank = this_thread::rank();
  if (current_world == nullptr || rank < 0) return MPI_COMM_SELF;
  const MPI_Comm comm = current_world->rank(rank).self_comm;
  return comm != nullptr ? comm : MPI_COMM_SELF;
}

}  // namespace weft::mpi
