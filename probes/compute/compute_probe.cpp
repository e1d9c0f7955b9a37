#include "probes/compute/compute_probe.hpp"

#include <fmt/format.h>

#include "probes/bandwidth/host_memory.hpp"
#include "probes/compute/cuda_compute_engine.hpp"
#include "probes/compute/host_engine.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/progress.hpp"
#include "common/text.hpp"

namespace interprobe {

namespace {

// A line of /proc/cpuinfo ("flags", "model name") of the first CPU; empty when absent.
std::string cpuinfo_field(const HostRoot& root, const std::string& key) {
  auto text = root.read_text("/proc/cpuinfo");
  if (!text) return "";
  std::size_t at = 0;
  while (at < text->size()) {
    std::size_t end = text->find('\n', at);
    std::string line = text->substr(at, end == std::string::npos ? std::string::npos : end - at);
    auto colon = line.find(':');
    if (colon != std::string::npos && std::string(trim(line.substr(0, colon))) == key)
      return std::string(trim(line.substr(colon + 1)));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

class ComputeProbe final : public Probe {
 public:
  ComputeProbe(ComputeRequest r, ComputeEngineFactory f) : request_(std::move(r)), factory_(std::move(f)) {}
  std::string name() const override { return "compute"; }

  void run(const ProbeContext& ctx, report::Report& report) override {
    if (!ctx.root.is_live())
      throw UnsupportedError("compute measures the live machine; --root replays a tree, so nothing is measured");
    report.compute = report::ComputeSection{};
    report.compute->plan = request_.plan;
    report.compute->target_cv_fraction = request_.sweep.target_cv;
    using report::EngineStatus;
    int usable = 0;
    bool any_failed = false;
    std::string last_reason;
    for (auto kind : request_.engines) {
      report.compute->engines.push_back({});
      std::size_t at = report.compute->engines.size() - 1;
      report.compute->engines[at].engine = kind;
      auto set_status = [&](EngineStatus status, const std::string& reason) {
        auto& e = report.compute->engines[at];
        e.engine = kind;
        e.status = status;
        e.reason = reason;
        last_reason = reason;
      };
      try {
        ComputeRequest request = request_;
        // Telemetry beside each GPU GEMM; host GEMMs load no GPU.
        if (kind == report::ComputeEngineKind::cuda && ctx.windows) ctx.windows->start(), request.windows = ctx.windows;
        auto engine = factory_(kind, ctx, request);
        run_compute_engine(*engine, request, report.compute->engines[at],
                           [&](const std::string& line) { ctx.progress.update(line + "..."); });
        ++usable;
      } catch (const InterruptedError&) {
        set_status(EngineStatus::interrupted, "interrupted: what finished is kept");
        throw;
      } catch (const UnsupportedError& e) {
        set_status(EngineStatus::unsupported, e.what());
      } catch (const InputError&) {
        throw;
      } catch (const std::exception& e) {
        set_status(EngineStatus::failed, e.what());
        any_failed = true;
        if (request_.engines.size() == 1) throw;
      }
    }
    // `compute --engine cuda` on a machine without it: exit 4 with the reason; `run` records it.
    if (usable == 0 && any_failed) throw std::runtime_error(last_reason);
    if (usable == 0) throw UnsupportedError(last_reason);
  }

 private:
  ComputeRequest request_;
  ComputeEngineFactory factory_;
};

}  // namespace

std::unique_ptr<ComputeEngine> make_compute_engine(report::ComputeEngineKind kind, const ProbeContext& ctx,
                                                   const ComputeRequest& request) {
  if (kind == report::ComputeEngineKind::cuda) return make_cuda_compute_engine(ctx, request);
  HostComputeOptions o;
  o.threads = request.host_threads;
  o.cpu_flags = cpuinfo_field(ctx.root, "flags");
  o.cpu_model = cpuinfo_field(ctx.root, "model name");
  // GEMM buffers may take a quarter of what the kernel says is available.
  if (auto avail = host_memory_available_bytes(ctx.root)) o.memory_budget_bytes = *avail / 4;
  return make_host_compute_engine(o);
}

std::unique_ptr<Probe> make_compute_probe(ComputeRequest request, ComputeEngineFactory factory) {
  validate_compute_request(request);
  return std::make_unique<ComputeProbe>(std::move(request), std::move(factory));
}

}  // namespace interprobe
