#include "sim_state.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "probes/gpu/cuda_driver_api.hpp"

namespace interprobe::sim {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Event::complete(std::uint64_t generation, double at_s) {
  std::lock_guard lock(m);
  time_s = at_s;
  completed = std::max(completed, generation);
  cv.notify_all();
}

void Event::wait(std::uint64_t generation) {
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return completed >= generation; });
}

Stream::Stream(Context* ctx) : clock_s(now_s()), ctx_(ctx) { worker_ = std::thread([this] { run(); }); }

Stream::~Stream() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (hung) {
    abandoned = true;
    worker_.detach();  // the hung operation returns once it sees `abandoned`; its memory is leaked
    return;
  }
  worker_.join();
}

void Stream::enqueue(std::function<void(Stream&)> op) {
  if (capture) {
    capture->push_back(std::move(op));
    return;
  }
  {
    std::lock_guard lock(m_);
    queue_.push_back(std::move(op));
    ++pending_;
  }
  cv_.notify_all();
}

void Stream::synchronize() {
  std::unique_lock lock(m_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
}

bool Stream::idle() {
  std::lock_guard lock(m_);
  return pending_ == 0;
}

void Stream::run() {
  for (;;) {
    std::function<void(Stream&)> op;
    {
      std::unique_lock lock(m_);
      bool waited = queue_.empty();
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      op = std::move(queue_.front());
      queue_.pop_front();
      // An idle device starts the next operation when the host queues it, not earlier.
      if (waited) clock_s = std::max(clock_s, now_s());
    }
    op(*this);
    if (abandoned) return;
    {
      std::lock_guard lock(m_);
      --pending_;
    }
    done_cv_.notify_all();
  }
}

Location State::locate(const void* p) {
  auto at = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(memory_m);
  auto find_in = [at](const auto& ranges) {
    auto it = ranges.upper_bound(at);
    if (it == ranges.begin()) return ranges.end();
    --it;
    std::size_t bytes = 0;
    if constexpr (std::is_same_v<std::decay_t<decltype(it->second)>, std::size_t>) bytes = it->second;
    else bytes = it->second.first;
    return at < it->first + std::max<std::size_t>(bytes, 1) ? it : ranges.end();
  };
  if (auto it = find_in(allocations); it != allocations.end()) return Location{it->second.second, it->second.second < 0};
  if (find_in(registered) != registered.end()) return Location{-1, true};
  return Location{-1, false};
}

State& state() {
  static State* s = [] {
    auto* fresh = new State;  // never destroyed: detached workers of hung streams may outlive main
    try {
      fresh->config = config_from_environment();
    } catch (const std::exception& e) {
      fresh->config_error = e.what();
    }
    return fresh;
  }();
  return *s;
}

void reset_state(SimConfig config) {
  State& s = state();
  s.ecc_tripped = false;
  for (auto& [device, stream] : s.legacy) {
    {
      std::lock_guard lock(s.streams_m);
      s.streams.erase(stream);
    }
    stream->synchronize();
    delete stream;
  }
  s.legacy.clear();
  {
    std::lock_guard lock(s.streams_m);
    s.hung_devices.clear();
  }
  ++s.generation;
  s.config = std::move(config);
  s.config_error.clear();
  s.initialized = false;
  s.contexts.clear();
  s.used_bytes.clear();
}

Context*& current_context() {
  thread_local Context* current = nullptr;
  return current;
}

int require_initialized() { return state().initialized ? cu::kSuccess : cu::kErrorNotInitialized; }

int require_context(Context*& ctx) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  ctx = current_context();
  return ctx ? cu::kSuccess : cu::kErrorInvalidContext;
}

void wait_context_idle(Context* ctx) {
  State& s = state();
  const std::uint64_t generation = s.generation;
  auto hung = [&] {
    std::lock_guard lock(s.streams_m);
    return s.hung_devices.count(ctx->device) > 0;
  };
  while (hung() && s.generation == generation) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (s.generation != generation) return;
  std::vector<Stream*> mine;
  {
    std::lock_guard lock(s.streams_m);
    for (Stream* stream : s.streams)
      if (stream->context() == ctx) mine.push_back(stream);
  }
  for (Stream* stream : mine) stream->synchronize();
}

CopyRoute route(const Location& from, const Location& to, bool peer_allowed) {
  const SimConfig& c = state().config;
  if (from.device < 0 || to.device < 0) {
    const Location& host = from.device < 0 ? from : to;
    return {host.pinned ? c.host : c.pageable, false};
  }
  if (from.device == to.device) return {c.device, false};
  if (peer_allowed) return {from.device > to.device ? c.peer_reverse : c.peer, true};
  return {c.staged, false};
}

namespace {

void sleep_until_s(double t) {
  double left = t - now_s();
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
}

}  // namespace

void timed_copy(Stream* stream, void* dst, const void* src, std::size_t bytes, const LinkModel& link, bool corrupt,
                bool hang) {
  if (hang) {
    if (stream) {
      stream->hung = true;
      std::lock_guard lock(state().streams_m);
      state().hung_devices.insert(stream->context()->device);
    }
    while (!(stream && stream->abandoned)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return;
  }
  std::memmove(dst, src, bytes);
  note_memory_written();
  if (state().config.faults.ecc_error) state().ecc_tripped = true;
  // A broken peer path: one byte in every 4 KiB page arrives flipped.
  if (corrupt)
    for (std::size_t i = 0; i < bytes; i += 4096) static_cast<unsigned char*>(dst)[i] ^= 0x5a;
  advance_clock(stream, link.seconds_for(bytes));
}

void note_memory_written() { state().write_epoch.fetch_add(1, std::memory_order_acq_rel); }

void advance_clock(Stream* stream, double seconds) {
  if (!stream) return;
  stream->clock_s += seconds;
  sleep_until_s(stream->clock_s);
}

}  // namespace interprobe::sim
