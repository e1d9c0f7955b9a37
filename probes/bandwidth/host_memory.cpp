#include "probes/bandwidth/host_memory.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "interprobe/build_config.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/hwloc_environment.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

#if INTERPROBE_HAVE_HWLOC
#include <hwloc.h>

#include "common/hwloc_topology.hpp"
#endif

namespace interprobe {

namespace {

unsigned allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

constexpr std::size_t kHugePage = 2u << 20;

std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

// Anonymous memory that starts on a 2 MiB boundary (so every 2 MiB of it can be one huge page)
// between two 2 MiB PROT_NONE guards: the buffer is a mapping of its own, so its smaps entry
// describes it alone (two neighbouring buffers with equal flags would merge into one entry).
// The guards cost address space only. release_guarded() finds them from the buffer's address.
void* map_guarded(std::size_t bytes) {
  std::size_t inner = round_up(bytes, kHugePage), total = inner + 3 * kHugePage;
  void* p = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw UnsupportedError(fmt::format("cannot allocate {} of host memory: {}", format_bytes(bytes), std::strerror(errno)));
  auto base = reinterpret_cast<std::uintptr_t>(p);
  std::uintptr_t data = round_up(base, kHugePage) + kHugePage;  // at least one 2 MiB guard below
  std::uintptr_t end = data + inner + kHugePage;                 // one above
  if (data - kHugePage > base) ::munmap(p, data - kHugePage - base);
  if (base + total > end) ::munmap(reinterpret_cast<void*>(end), base + total - end);
  if (::mprotect(reinterpret_cast<void*>(data), inner, PROT_READ | PROT_WRITE) != 0) {
    int err = errno;
    ::munmap(reinterpret_cast<void*>(data - kHugePage), inner + 2 * kHugePage);
    throw UnsupportedError(fmt::format("cannot allocate {} of host memory: {}", format_bytes(bytes), std::strerror(err)));
  }
  return reinterpret_cast<void*>(data);
}

void release_guarded(void* data, std::size_t bytes) {
  ::munmap(static_cast<unsigned char*>(data) - kHugePage, round_up(bytes, kHugePage) + 2 * kHugePage);
}

}  // namespace

struct NumaPlacement::Impl {
  std::string reason;
  std::vector<int> nodes{0};
#if INTERPROBE_HAVE_HWLOC
  std::optional<HwlocTopology> holder;  // loaded, or empty
  hwloc_topology_t topology = nullptr;  // holder's, while it is loaded
  hwloc_obj_t node_object(std::optional<int> node) const {
    if (!topology || !node) return nullptr;
    int n = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t obj = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
      if (obj && static_cast<int>(obj->os_index) == *node) return obj;
    }
    return nullptr;
  }
#endif
};

NumaPlacement::NumaPlacement(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NumaPlacement::~NumaPlacement() = default;

std::shared_ptr<const NumaPlacement> NumaPlacement::detect() {
  auto impl = std::make_unique<Impl>();
#if INTERPROBE_HAVE_HWLOC
  HwlocEnvironment environment{HostRoot()};
  impl->holder.emplace();
  if (!*impl->holder || hwloc_topology_load(impl->holder->get()) != 0) {
    impl->holder.reset();
    impl->reason = "hwloc could not load the topology; buffers are not placed on NUMA nodes";
  } else {
    impl->topology = impl->holder->get();
    impl->nodes.clear();
    int n = hwloc_get_nbobjs_by_type(impl->topology, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < n; ++i)
      if (auto obj = hwloc_get_obj_by_type(impl->topology, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i)))
        impl->nodes.push_back(static_cast<int>(obj->os_index));
    if (impl->nodes.empty()) impl->nodes.push_back(0);
    const auto* support = hwloc_topology_get_support(impl->topology);
    if (!support->membind->alloc_membind || !support->membind->bind_membind)
      impl->reason = "hwloc cannot bind memory on this system; buffers are not placed on NUMA nodes";
  }
#else
  impl->reason = "compiled out: built without hwloc, buffers are not placed on NUMA nodes; rebuild with "
                 "-DINTERPROBE_WITH_HWLOC=ON";
#endif
  return std::shared_ptr<const NumaPlacement>(new NumaPlacement(std::move(impl)));
}

std::vector<int> NumaPlacement::nodes() const { return impl_->nodes; }
bool NumaPlacement::can_place() const { return impl_->reason.empty(); }
const std::string& NumaPlacement::reason() const { return impl_->reason; }

unsigned NumaPlacement::cpus_near(std::optional<int> node) const {
#if INTERPROBE_HAVE_HWLOC
  if (hwloc_obj_t obj = impl_->node_object(node); obj && obj->cpuset) {
    int weight = hwloc_bitmap_weight(obj->cpuset);
    if (weight > 0) return std::min(static_cast<unsigned>(weight), allowed_cpus());
  }
#else
  (void)node;
#endif
  return allowed_cpus();
}

bool NumaPlacement::bind_thread(std::optional<int> node) const {
#if INTERPROBE_HAVE_HWLOC
  if (hwloc_obj_t obj = impl_->node_object(node); obj && obj->cpuset && impl_->nodes.size() > 1)
    return hwloc_set_cpubind(impl_->topology, obj->cpuset, HWLOC_CPUBIND_THREAD) == 0;
#else
  (void)node;
#endif
  return false;  // one node (nothing to choose) or no hwloc
}

void* NumaPlacement::allocate(std::size_t bytes, std::optional<int> node, bool& placed) const {
  placed = false;
  void* p = map_guarded(bytes);
#if INTERPROBE_HAVE_HWLOC
  // Bound before the first touch, so the pages come from the node asked for.
  if (hwloc_obj_t obj = impl_->node_object(node); obj && can_place())
    placed = hwloc_set_area_membind(impl_->topology, p, round_up(bytes, kHugePage), obj->nodeset, HWLOC_MEMBIND_BIND,
                                    HWLOC_MEMBIND_BYNODESET) == 0;
#else
  (void)node;
#endif
  return p;
}

void NumaPlacement::release(void* data, std::size_t bytes, bool placed) const {
  (void)placed;
  release_guarded(data, bytes);
}

HostBuffer::HostBuffer(std::shared_ptr<const NumaPlacement> numa, std::size_t bytes, std::optional<int> node,
                       PagePolicy pages)
    : numa_(std::move(numa)), bytes_(bytes) {
  if (bytes_ == 0) return;
  data_ = static_cast<unsigned char*>(numa_->allocate(bytes_, node, placed_));
  // The same advice for every size, before the first touch decides the backing.
  advise_pages(data_, bytes_, pages);
}

std::optional<std::uint64_t> HostBuffer::huge_page_bytes() const { return huge_page_bytes_of(data_, bytes_); }

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : written_bytes(std::exchange(o.written_bytes, 0)), numa_(std::move(o.numa_)), data_(std::exchange(o.data_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)), placed_(o.placed_), locked_bytes_(std::exchange(o.locked_bytes_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    numa_ = std::move(o.numa_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    placed_ = o.placed_;
    locked_bytes_ = std::exchange(o.locked_bytes_, 0);
    written_bytes = std::exchange(o.written_bytes, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() { reset(); }

void HostBuffer::reset() noexcept {
  if (!data_) return;
  unlock();
  numa_->release(data_, bytes_, placed_);
  data_ = nullptr;
  bytes_ = 0;
}

void HostBuffer::lock(std::size_t bytes) {
  if (bytes == 0 || bytes > bytes_) bytes = bytes_;
  if (!data_ || locked_bytes_ >= bytes) return;
  if (::mlock(data_, bytes) != 0) {
    int err = errno;
    auto limit = locked_memory_limit_bytes();
    throw UnsupportedError(fmt::format("cannot lock {} of host memory (mlock: {}; RLIMIT_MEMLOCK {}); raise it with "
                                       "`ulimit -l` or run with CAP_IPC_LOCK",
                                       format_bytes(bytes), std::strerror(err),
                                       limit ? format_bytes(*limit) : std::string("unlimited")));
  }
  locked_bytes_ = bytes;
}

void HostBuffer::unlock() {
  if (locked_bytes_ > 0) ::munlock(data_, locked_bytes_);
  locked_bytes_ = 0;
}

HostBufferCache::Entry* HostBufferCache::find(const std::string& role, int node, PagePolicy pages) {
  for (auto& e : entries_)
    if (e.role == role && e.node == node && e.pages == pages) return &e;
  return nullptr;
}

HostBuffer& HostBufferCache::get(const std::string& role, int node, std::size_t bytes, bool& fresh, PagePolicy pages) {
  fresh = false;
  if (Entry* e = find(role, node, pages)) {
    if (e->buffer.size() < bytes) {
      e->buffer = HostBuffer();  // free first: two gigabyte buffers at once may not fit
      e->buffer = HostBuffer(numa_, bytes, node, pages);
      fresh = true;
    }
    return e->buffer;
  }
  entries_.push_back({role, node, pages, HostBuffer(numa_, bytes, node, pages)});
  fresh = true;
  return entries_.back().buffer;
}

HostBuffer& HostBufferCache::renew(const std::string& role, int node, PagePolicy pages) {
  Entry* e = find(role, node, pages);
  if (!e) throw std::logic_error("HostBufferCache::renew: no buffer for role " + role);
  HostBuffer next(numa_, e->buffer.size(), node, pages);
  e->buffer = std::move(next);
  return e->buffer;
}

void HostBuffer::touch() {
  if (data_) std::memset(data_, 0, bytes_);
}

std::optional<std::size_t> host_memory_available_bytes(const HostRoot& root) {
  auto meminfo = root.read("/proc/meminfo");
  if (!meminfo.ok()) return std::nullopt;
  auto field = find_field(*meminfo.content, "MemAvailable", ':');
  if (!field) return std::nullopt;
  auto bytes = parse_kib_as_bytes(*field);
  if (!bytes) return std::nullopt;
  return static_cast<std::size_t>(*bytes);
}

std::optional<std::size_t> locked_memory_limit_bytes() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  // CAP_IPC_LOCK lifts the limit: find out by locking a little more than it allows.
  std::size_t beyond = static_cast<std::size_t>(limit.rlim_cur) + (64u << 10);
  void* probe = ::mmap(nullptr, beyond, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe != MAP_FAILED) {
    bool lifted = ::mlock(probe, beyond) == 0;
    if (lifted) ::munlock(probe, beyond);
    ::munmap(probe, beyond);
    if (lifted) return std::nullopt;
  }
  return static_cast<std::size_t>(limit.rlim_cur);
}

}  // namespace interprobe
