// The NCCL backend. The library is opened at run time and declared from its ABI (nccl_api.hpp):
// no header, no link dependency. Buffers and streams go through the CUDA driver API (probes/gpu)
// in each GPU's primary context, which is the one NCCL's own runtime uses: no CUDA runtime.
#include "probes/collective/nccl_backend.hpp"


#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/dynlib.hpp"
#include "common/errors.hpp"
#include "common/text.hpp"
#include "probes/collective/nccl_api.hpp"
#include "probes/gpu/cuda_device.hpp"
#include "probes/gpu/cuda_driver.hpp"

namespace interprobe::collective {

namespace {

struct NcclApi {
  std::unique_ptr<DynamicLibrary> library;
  nccl::GetVersionFn* get_version = nullptr;
  nccl::GetErrorStringFn* error_string = nullptr;
  nccl::GetUniqueIdFn* get_unique_id = nullptr;
  nccl::CommInitAllFn* comm_init_all = nullptr;
  nccl::CommInitRankFn* comm_init_rank = nullptr;
  nccl::CommDestroyFn* comm_destroy = nullptr;
  nccl::CommAbortFn* comm_abort = nullptr;
  nccl::CommGetAsyncErrorFn* comm_async_error = nullptr;
  nccl::AllReduceFn* all_reduce = nullptr;
  nccl::GroupStartFn* group_start = nullptr;
  nccl::GroupEndFn* group_end = nullptr;
  nccl::ResetDebugInitFn* reset_debug_init = nullptr;  // optional: NCCL 2.24.3+
  // Optional: only `collectives` needs them (send/recv are NCCL 2.7+).
  nccl::AllGatherFn* all_gather = nullptr;
  nccl::ReduceScatterFn* reduce_scatter = nullptr;
  nccl::BroadcastFn* broadcast = nullptr;
  nccl::SendFn* send = nullptr;
  nccl::RecvFn* recv = nullptr;

  void check(nccl::Result rc, const char* call) const {
    if (rc != nccl::kSuccess) throw VendorError(call, rc, error_string ? error_string(rc) : "NCCL error");
  }
};

// Loaded once per process; nullptr with `why` when NCCL cannot be opened or is too old.
const NcclApi* load_nccl(std::string* why) {
  static std::unique_ptr<NcclApi> api;
  static std::string failure;
  if (api) return api.get();
  if (!failure.empty()) {
    *why = failure;
    return nullptr;
  }
  auto loaded = std::make_unique<NcclApi>();
  std::string error;
  loaded->library = DynamicLibrary::open(VendorLibrary::nccl, &error);
  if (!loaded->library) {
    failure = "NCCL: " + error;
    *why = failure;
    return nullptr;
  }
  const auto& lib = *loaded->library;
  bool complete = true;
  auto bind = [&](auto& slot, const char* name) {
    slot = lib.symbol<std::remove_pointer_t<std::remove_reference_t<decltype(slot)>>>(name);
    if (!slot && complete) {
      complete = false;
      failure = fmt::format("NCCL at {} lacks {} (too old; interprobe needs NCCL 2.4 or newer)", lib.path(), name);
    }
  };
  bind(loaded->get_version, "ncclGetVersion");
  bind(loaded->error_string, "ncclGetErrorString");
  bind(loaded->get_unique_id, "ncclGetUniqueId");
  bind(loaded->comm_init_all, "ncclCommInitAll");
  bind(loaded->comm_init_rank, "ncclCommInitRank");
  bind(loaded->comm_destroy, "ncclCommDestroy");
  bind(loaded->comm_abort, "ncclCommAbort");
  bind(loaded->comm_async_error, "ncclCommGetAsyncError");
  bind(loaded->all_reduce, "ncclAllReduce");
  bind(loaded->group_start, "ncclGroupStart");
  bind(loaded->group_end, "ncclGroupEnd");
  loaded->reset_debug_init = lib.symbol<nccl::ResetDebugInitFn>("ncclResetDebugInit");
  loaded->all_gather = lib.symbol<nccl::AllGatherFn>("ncclAllGather");
  loaded->reduce_scatter = lib.symbol<nccl::ReduceScatterFn>("ncclReduceScatter");
  loaded->broadcast = lib.symbol<nccl::BroadcastFn>("ncclBroadcast");
  loaded->send = lib.symbol<nccl::SendFn>("ncclSend");
  loaded->recv = lib.symbol<nccl::RecvFn>("ncclRecv");
  if (!complete) {
    *why = failure;
    return nullptr;
  }
  api = std::move(loaded);
  return api.get();
}

int nccl_type(Dtype d) {
  switch (d) {
    case Dtype::float32: return nccl::kFloat32;
    case Dtype::float16: return nccl::kFloat16;
    case Dtype::bfloat16: return nccl::kBfloat16;
  }
  return nccl::kFloat32;
}

std::string version_text(int code) {
  // NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z before.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

struct LocalRank {
  int device = 0;
  nccl::Comm comm = nullptr;
  std::unique_ptr<cuda::Stream> stream;
  cuda::DeviceMemory send, recv;
};

class NcclBackend final : public CollectiveBackend {
 public:
  NcclBackend(RankGroup& group, const NcclApi& api, int device_count) : CollectiveBackend(group), api_(api) {
    int version = 0;
    api_.check(api_.get_version(&version), "ncclGetVersion");
    version_ = version_text(version);
    prepare_log();  // before the communicators: NCCL reads its log settings at its first line
    if (group.process_count() == 1) {
      ranks_ = device_count;
      locals_.resize(static_cast<std::size_t>(device_count));
      std::vector<nccl::Comm> comms(locals_.size());
      std::vector<int> devices(locals_.size());
      for (int i = 0; i < device_count; ++i) devices[static_cast<std::size_t>(i)] = i;
      api_.check(api_.comm_init_all(comms.data(), device_count, devices.data()), "ncclCommInitAll");
      for (std::size_t i = 0; i < locals_.size(); ++i) {
        locals_[i].device = devices[i];
        locals_[i].comm = comms[i];
      }
    } else {
      // One GPU per process, by its place on the node; the id travels over MPI.
      ranks_ = group.process_count();
      first_rank_ = group.process_rank();
      locals_.resize(1);
      locals_[0].device = group.local_process_rank();
      // NCCL takes the current device from the current context: this GPU's primary context.
      cu::check(cu::driver().ctx_set_current(cuda::primary_context(locals_[0].device)), "cuCtxSetCurrent");
      nccl::UniqueId id{};
      std::vector<std::byte> blob(sizeof id);
      if (group.process_rank() == 0) {
        api_.check(api_.get_unique_id(&id), "ncclGetUniqueId");
        std::memcpy(blob.data(), &id, sizeof id);
      }
      blob = group.broadcast(blob);
      std::memcpy(&id, blob.data(), sizeof id);
      api_.check(api_.comm_init_rank(&locals_[0].comm, ranks_, id, first_rank_), "ncclCommInitRank");
    }
    for (auto& l : locals_) l.stream = std::make_unique<cuda::Stream>(l.device);
  }

  ~NcclBackend() override {
    for (auto& l : locals_)
      if (l.comm && !aborted_) api_.comm_destroy(l.comm);
    // Buffers and streams go with locals_ (cuMemFree, cuStreamDestroy).
  }

  report::AllreduceBackend kind() const override { return report::AllreduceBackend::nccl; }
  int ranks() const override { return ranks_; }
  int rank() const override { return first_rank_; }
  int local_ranks() const override { return static_cast<int>(locals_.size()); }
  std::string library_version() const override { return version_; }
  std::vector<std::string> devices() const override {
    std::vector<std::string> out;
    for (const auto& l : locals_) out.push_back(fmt::format("{}: {}", l.device, cuda::device_label(l.device)));
    return out;
  }

  void allocate(std::size_t bytes) override {
    for (auto& l : locals_) {
      l.send = cuda::DeviceMemory();
      l.recv = cuda::DeviceMemory();
      l.send = cuda::DeviceMemory(l.device, bytes);
      l.recv = cuda::DeviceMemory(l.device, bytes);
    }
    staging_pin_ = cuda::PinnedRegistration();
    staging_.assign(bytes, std::byte{0});
    // With the first local GPU's context set here, not whatever ncclCommInitAll left current.
    staging_pin_ = cuda::PinnedRegistration(locals_.front().device, staging_.data(), staging_.size());
    allocated_ = bytes;
  }
  // Inputs go from pinned memory on the stream the all-reduce runs on, and that stream is
  // drained before anything is timed (as nccl-tests fills its buffers): a pageable cuMemcpyHtoD
  // returns once its bytes are staged and is ordered only with the legacy stream, which this
  // non-blocking stream does not wait for, so an all-reduce could start on stale input.
  void write(BufferRole role, int local, const std::byte* host, std::size_t bytes) override {
    auto& l = at(local, bytes);
    std::memcpy(staging_.data(), host, bytes);
    cuda::DeviceGuard guard(l.device);
    cuda::copy_async((role == BufferRole::send ? l.send : l.recv).get(), l.device, staging_.data(), -1, bytes, *l.stream);
    l.stream->synchronize();
  }
  void read(BufferRole role, int local, std::byte* host, std::size_t bytes) override {
    auto& l = at(local, bytes);
    {
      cuda::DeviceGuard guard(l.device);
      cuda::copy_async(staging_.data(), -1, (role == BufferRole::send ? l.send : l.recv).get(), l.device, bytes, *l.stream);
      l.stream->synchronize();
    }
    std::memcpy(host, staging_.data(), bytes);
  }
  void allreduce(std::size_t count, Dtype dtype, bool in_place) override {
    if (aborted_) throw std::logic_error("NCCL communicator was aborted");
    // One thread drives several GPUs: the group makes NCCL launch them together.
    api_.check(api_.group_start(), "ncclGroupStart");
    for (auto& l : locals_) {
      const void* send = in_place ? l.recv.get() : l.send.get();
      nccl::Result rc = api_.all_reduce(send, l.recv.get(), count, nccl_type(dtype), nccl::kSum, l.comm, l.stream->get());
      if (rc != nccl::kSuccess) {
        api_.group_end();
        api_.check(rc, "ncclAllReduce");
      }
    }
    api_.check(api_.group_end(), "ncclGroupEnd");
  }

  // The other collectives, as nccl-tests calls them: alltoall and sendrecv are grouped
  // ncclSend/ncclRecv (alltoall to every rank, itself included). In place the receive buffer
  // holds the input: a rank's all-gather block at rank x count, reduce-scatter's whole input.
  void start(report::CollectiveOp op, std::size_t count, Dtype dtype, bool in_place) override {
    using report::CollectiveOp;
    if (op == CollectiveOp::all_reduce) return allreduce(count, dtype, in_place);
    if (aborted_) throw std::logic_error("NCCL communicator was aborted");
    const bool grouped_p2p = op == CollectiveOp::alltoall || op == CollectiveOp::sendrecv;
    const bool available = grouped_p2p ? api_.send && api_.recv
                           : op == CollectiveOp::all_gather ? api_.all_gather != nullptr
                           : op == CollectiveOp::reduce_scatter ? api_.reduce_scatter != nullptr
                                                                : api_.broadcast != nullptr;
    if (!available) throw UnsupportedError(fmt::format("NCCL {} lacks the calls {} needs", version_, report::to_string(op)));
    const int type = nccl_type(dtype);
    const std::size_t width = element_bytes(dtype);
    api_.check(api_.group_start(), "ncclGroupStart");
    nccl::Result rc = nccl::kSuccess;
    for (std::size_t i = 0; i < locals_.size() && rc == nccl::kSuccess; ++i) {
      auto& l = locals_[i];
      const int me = first_rank_ + static_cast<int>(i);
      auto* recv = static_cast<std::byte*>(l.recv.get());
      const std::byte* send = static_cast<const std::byte*>(l.send.get());
      switch (op) {
        case CollectiveOp::all_gather:
          rc = api_.all_gather(in_place ? recv + static_cast<std::size_t>(me) * count * width : send, recv, count, type, l.comm, l.stream->get());
          break;
        case CollectiveOp::reduce_scatter:
          rc = api_.reduce_scatter(in_place ? recv : send, in_place ? recv + static_cast<std::size_t>(me) * count * width : recv, count, type,
                                   nccl::kSum, l.comm, l.stream->get());
          break;
        case CollectiveOp::broadcast:
          rc = api_.broadcast(in_place ? recv : send, recv, count, type, 0, l.comm, l.stream->get());
          break;
        case CollectiveOp::alltoall:
          for (int peer = 0; peer < ranks_ && rc == nccl::kSuccess; ++peer) {
            const std::size_t at = static_cast<std::size_t>(peer) * count * width;
            rc = api_.send(send + at, count, type, peer, l.comm, l.stream->get());
            if (rc == nccl::kSuccess) rc = api_.recv(recv + at, count, type, peer, l.comm, l.stream->get());
          }
          break;
        case CollectiveOp::sendrecv:
          rc = api_.send(send, count, type, (me + 1) % ranks_, l.comm, l.stream->get());
          if (rc == nccl::kSuccess) rc = api_.recv(recv, count, type, (me + ranks_ - 1) % ranks_, l.comm, l.stream->get());
          break;
        case CollectiveOp::all_reduce: break;
      }
    }
    if (rc != nccl::kSuccess) {
      api_.group_end();
      api_.check(rc, report::to_string(op));
    }
    api_.check(api_.group_end(), "ncclGroupEnd");
  }
  // NCCL reads NCCL_DEBUG* once; ncclResetDebugInit makes it read them again. Each switch gets a
  // fresh file, since NCCL opens its file anew (truncating) when it re-reads.
  void log_choices(bool on) override {
    if (!log_switchable_ || on == logging_) return;
    logging_ = on;
    ::setenv("NCCL_DEBUG", on ? verbose_level_.c_str() : "WARN", 1);
    ::setenv("NCCL_DEBUG_FILE", fmt::format("{}.{}.log", log_file_stem_, ++log_switches_).c_str(), 1);
    api_.reset_debug_init();
  }
  std::vector<std::string> notes() const override { return notes_; }

  // The watchdog: polls every stream until done; past the deadline aborts the communicators,
  // which makes NCCL's kernels give up, and reports the hang.
  void synchronize(Clock::time_point deadline, std::uint64_t bytes) override {
    const auto started = Clock::now();
    for (std::size_t polls = 0;; ++polls) {
      bool all_done = true;
      for (auto& l : locals_) all_done = l.stream->done() && all_done;
      if (all_done) return;
      for (auto& l : locals_) {
        nccl::Result async = nccl::kSuccess;
        api_.check(api_.comm_async_error(l.comm, &async), "ncclCommGetAsyncError");
        if (async != nccl::kSuccess && async != nccl::kInProgress) {
          abort_all_comms();
          api_.check(async, "NCCL asynchronous error");
        }
      }
      const auto now = Clock::now();
      if (now > deadline) {
        abort_all_comms();
        throw CollectiveHang(bytes, std::chrono::duration<double>(now - started).count(),
                             "ncclCommAbort called; the communicator is gone");
      }
      // Busy-poll first (small all-reduces take microseconds), then back off.
      if (std::chrono::duration<double>(now - started).count() > 0.5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      else if (polls % 64 == 63) std::this_thread::yield();
    }
  }

 private:
  // Only the log interprobe set up (NcclLogCapture: INFO into its own directory) is switched.
  void prepare_log() {
    const char* file = std::getenv("NCCL_DEBUG_FILE");
    const char* level = std::getenv("NCCL_DEBUG");
    if (!file || !std::strstr(file, "/interprobe-nccl-") || !level) return;
    if (api_.reset_debug_init) {
      std::string stem = file;
      if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".log") == 0) stem.resize(stem.size() - 4);
      log_file_stem_ = stem;
      verbose_level_ = level;
      log_switchable_ = true;
      notes_.push_back("NCCL's transports and algorithms are read from its log of the untimed connection and warm-up; "
                       "the timed iterations ran with NCCL_DEBUG=WARN");
      return;
    }
    // Without ncclResetDebugInit the log stays as first read: TUNING, one line per call, would
    // write inside every timed iteration. Keep the once-only INIT lines (transports) alone.
    const char* subsys = std::getenv("NCCL_DEBUG_SUBSYS");
    if (!subsys) return;
    std::string kept;
    for (const auto& item : split(subsys, ','))
      if (item != "TUNING") kept += (kept.empty() ? "" : ",") + item;
    ::setenv("NCCL_DEBUG_SUBSYS", kept.c_str(), 1);
    notes_.push_back(fmt::format("NCCL {} cannot turn its log off once started (ncclResetDebugInit is 2.24.3+): its per-call "
                                 "TUNING lines were left off, so algorithms are not recorded",
                                 version_));
  }

  LocalRank& at(int local, std::size_t bytes) {
    if (local < 0 || static_cast<std::size_t>(local) >= locals_.size() || bytes > allocated_)
      throw std::logic_error("NCCL backend: access beyond the allocated buffers");
    return locals_[static_cast<std::size_t>(local)];
  }
  void abort_all_comms() {
    if (aborted_) return;
    aborted_ = true;
    for (auto& l : locals_)
      if (l.comm) api_.comm_abort(l.comm);
  }

  const NcclApi& api_;
  std::string version_;
  int ranks_ = 0;
  int first_rank_ = 0;
  std::vector<LocalRank> locals_;
  std::vector<std::byte> staging_;         // host side of every write and read, page-locked
  cuda::PinnedRegistration staging_pin_;   // declared after staging_: unregistered before it is freed
  std::size_t allocated_ = 0;
  bool aborted_ = false;
  bool log_switchable_ = false, logging_ = true;
  std::string log_file_stem_, verbose_level_;
  int log_switches_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace

bool nccl_compiled_in() { return true; }

int visible_gpu_count(std::string* why) {
  int count = 0;
  try {
    const cu::Driver& d = cu::driver();
    if (cu::Result rc = d.device_get_count(&count); rc != cu::kSuccess) {
      if (why) *why = fmt::format("no usable GPU: cuDeviceGetCount: {}", d.describe(rc));
      return 0;
    }
  } catch (const UnsupportedError& e) {
    if (why) *why = e.what();
    return 0;
  }
  if (count == 0 && why) *why = "no GPU: the CUDA driver sees no device";
  return count;
}

std::unique_ptr<CollectiveBackend> make_nccl_backend(RankGroup& group) {
  std::string why;
  int devices = visible_gpu_count(&why);
  const NcclApi* api = devices > 0 ? load_nccl(&why) : nullptr;
  if (api && group.process_count() > 1 && group.local_process_count() > devices) {
    api = nullptr;
    why = fmt::format("{} ranks on this node but {} GPU(s): start at most one rank per GPU", group.local_process_count(), devices);
  }
  if (group.process_count() > 1) {
    // Every rank must learn when one cannot start, or the others wait for its id for ever.
    const std::uint64_t failing = group.sum_over_processes(api ? 0 : 1);
    if (failing > 0) {
      throw UnsupportedError(api ? fmt::format("{} of {} ranks cannot run NCCL (see their messages)", failing, group.process_count())
                                 : why);
    }
    try {
      return std::make_unique<NcclBackend>(group, *api, devices);
    } catch (const std::exception& e) {
      group.abort_all(fmt::format("NCCL initialization failed: {}", e.what()), 3);
    }
  }
  if (!api) throw UnsupportedError(why);
  return std::make_unique<NcclBackend>(group, *api, devices);
}

}  // namespace interprobe::collective
