#include "probes/bandwidth/bandwidth_probe.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "probes/bandwidth/cpu_cycle.hpp"
#include "probes/bandwidth/cuda_engine.hpp"
#include "probes/bandwidth/expected.hpp"
#include "probes/bandwidth/host_engine.hpp"
#include "probes/bandwidth/host_memory.hpp"
#include "probes/bandwidth/p2p_truth.hpp"
#include "probes/bandwidth/size_plan.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/progress.hpp"
#include "common/units.hpp"
#include "model/page_backing.hpp"

namespace interprobe {

BandwidthRequest bandwidth_plan(report::BandwidthPlan plan) {
  using report::BandwidthPlan;
  BandwidthRequest r;
  r.plan = plan;
  if (plan == BandwidthPlan::quick) {
    r.sweep.sizes = geometric_sizes(4, 256u << 20, 4);
    r.sweep.size_budget_s = 0.08;
    r.sweep.max_samples = 50;
    r.host_locked = false;
    r.cuda_every_kind = false;
  } else if (plan == BandwidthPlan::full) {
    r.sweep.sizes = geometric_sizes(4, 4ull << 30, 2);
    r.sweep.size_budget_s = 0.5;
    r.sweep.max_samples = 400;
    r.sweep.passes = 4;
    r.cuda_both_directions = true;
  } else if (plan == BandwidthPlan::standard) {
    r.sweep.sizes = geometric_sizes(4, 1u << 30, 2);
    // Four passes, host buffers replaced between them: each report carries enough of the
    // run-to-run noise (moments, pages) that two back-to-back runs compare as the same machine.
    r.sweep.passes = 4;
  } else {
    throw InputError(fmt::format("bandwidth plan '{}': use quick, standard or full", to_string(plan)));
  }
  return r;
}

void validate_request(const BandwidthRequest& r) {
  if (r.engines.empty()) throw InputError("--engine: give host, cuda or all");
  if (!(r.sweep.target_cv > 0) || r.sweep.target_cv >= 1)
    throw InputError(fmt::format("--target-cv {}: give a fraction above 0 and below 1, e.g. 0.01 for 1%", r.sweep.target_cv));
  if (r.host_threads > 1024) throw InputError(fmt::format("--threads {}: give 1 to 1024", r.host_threads));
  if (r.sweep.sizes.empty()) throw InputError("--sizes: give at least one size");
  if (r.sweep.passes < 1 || r.sweep.passes > 16) throw InputError(fmt::format("--passes {}: give 1 to 16", r.sweep.passes));
}

namespace {

class BandwidthProbe final : public Probe {
 public:
  explicit BandwidthProbe(BandwidthRequest r) : request_(std::move(r)) {}
  std::string name() const override { return "bandwidth"; }

  void run(const ProbeContext& ctx, report::Report& report) override {
    if (!ctx.root.is_live())
      throw UnsupportedError("bandwidth measures the live machine; --root replays a tree, so nothing is measured");
    report.bandwidth = report::BandwidthSection{};
    report.bandwidth->plan = request_.plan;
    report.bandwidth->target_cv_fraction = request_.sweep.target_cv;
    report.bandwidth->passes = request_.sweep.passes;
    if (auto enabled = ctx.root.read_text("/sys/kernel/mm/transparent_hugepage/enabled"))
      thp_mode_ = report.bandwidth->thp_mode = thp_mode_from(*enabled);
    numa_ = NumaPlacement::detect();
    using report::EngineStatus;
    for (const auto engine : request_.engines) {
      report.bandwidth->engines.push_back({engine, EngineStatus::ok, std::nullopt, {}});
      std::size_t index = report.bandwidth->engines.size() - 1;
      auto set_status = [&](EngineStatus status, const std::string& reason) {
        report.bandwidth->engines[index].status = status;
        report.bandwidth->engines[index].reason = reason;
      };
      try {
        if (engine == report::BandwidthEngine::host) run_host(ctx, report, index);
        else run_cuda(ctx, report, index);
      } catch (const InterruptedError&) {
        set_status(EngineStatus::interrupted, "interrupted");
        throw;
      } catch (const UnsupportedError& e) {
        set_status(EngineStatus::unsupported, e.what());
        if (request_.engines.size() == 1) throw;  // `bw --engine cuda`: exit 4 with the reason
      } catch (const InputError&) {
        throw;
      } catch (const std::exception& e) {
        set_status(EngineStatus::failed, e.what());
        if (request_.engines.size() == 1) throw;
      }
    }
  }

 private:
  report::BandwidthEngineStatus& engine_status(report::Report& r, std::size_t index) {
    return r.bandwidth->engines[index];
  }

  void run_host(const ProbeContext& ctx, report::Report& report, std::size_t index) {
    auto& status = engine_status(report, index);
    if (!numa_->can_place()) status.notes.push_back(numa_->reason());
    auto nodes = numa_->nodes();
    int local = nodes.front();
    status.cycle_ns = measure_cycle_ns();
    if (nodes.size() < 2)
      status.notes.push_back(fmt::format("remote NUMA copies unavailable: this machine has 1 NUMA node (node{})", local));
    unsigned threads = request_.host_threads ? request_.host_threads : std::min(8u, numa_->cpus_near(local));
    std::uint64_t largest = *std::max_element(request_.sweep.sizes.begin(), request_.sweep.sizes.end());
    // Two buffers per sweep must fit in half of what the kernel says is available.
    std::uint64_t limit = largest;
    if (auto avail = host_memory_available_bytes(ctx.root)) limit = std::min<std::uint64_t>(limit, *avail / 4);

    auto lock_limit = locked_memory_limit_bytes();
    std::vector<HostPathSpec> specs;
    auto add = [&](const char* kind, int src, int dst, unsigned t, bool locked) {
      HostPathSpec s;
      s.kind = kind;
      s.src_node = src;
      s.dst_node = dst;
      s.threads = t;
      s.locked = locked;
      s.chunk_bytes = request_.staged_chunk_bytes;
      s.max_bytes = limit;
      s.pages = request_.host_pages;
      if (locked && lock_limit) s.max_bytes = std::min<std::uint64_t>(s.max_bytes, *lock_limit / 2);
      specs.push_back(s);
    };
    add("memcpy", local, local, 1, false);
    if (threads > 1) add("memcpy", local, local, threads, false);
    if (request_.host_locked) add("memcpy", local, local, threads, true);
    add("staged", local, local, 2, false);
    for (int remote : nodes)
      if (remote != local) {
        add("memcpy", local, remote, threads, false);
        add("staged", local, remote, 2, false);
      }
    auto cache = std::make_shared<HostBufferCache>(numa_);
    auto load_before = load_average(ctx.root);
    for (const auto& spec : specs) {
      auto engine = make_host_engine(spec, numa_, cache);
      run_one(ctx, report, *engine, std::nullopt);
    }
    note_busy_machine(engine_status(report, index), load_before, load_average(ctx.root), numa_->cpus_near(std::nullopt));
  }

  // The 1-minute load average (/proc/loadavg), nullopt when unreadable.
  static std::optional<double> load_average(const HostRoot& root) {
    auto text = root.read_text("/proc/loadavg");
    if (!text) return std::nullopt;
    try {
      return std::stod(*text);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // Other processes on the CPUs make host copies slower and their medians differ from run to
  // run; the report says so instead of presenting the machine's noise as the copy path's.
  static void note_busy_machine(report::BandwidthEngineStatus& status, std::optional<double> before,
                                std::optional<double> after, unsigned cpus) {
    if (!before || !after || cpus == 0) return;
    // This process counts about one (two with 2 copy threads); above ~1 more per two CPUs others compete.
    double busiest = std::max(*before, *after);
    if (busiest < 1.0 + 0.5 * cpus) return;
    status.notes.push_back(fmt::format("busy machine: load average {:.1f} -> {:.1f} on {} CPUs during the host sweeps; "
                                       "other processes shared the CPUs and memory, so rates differ more between runs",
                                       *before, *after, cpus));
  }

  void run_cuda(const ProbeContext& ctx, report::Report& report, std::size_t index) {
    if (ctx.windows) ctx.windows->start();  // telemetry beside every GPU copy size
    CudaPlan plan;
    plan.every_kind = request_.cuda_every_kind;
    plan.both_directions = request_.cuda_both_directions;
    CudaPaths paths = make_cuda_paths(plan, numa_, ctx.root);
    auto& notes = engine_status(report, index).notes;
    notes.insert(notes.end(), paths.notes.begin(), paths.notes.end());
    for (auto& engine : paths.engines) {
      std::optional<ExpectedRate> expected;
      if (report.topology) expected = expected_rate(*report.topology, engine->describe(), paths.gpu_bdf);
      run_one(ctx, report, *engine, expected);
      engine.reset();  // frees its GPU and pinned memory before the next path
    }
    std::vector<PeerClaimInput> claims;
    for (const auto& c : paths.peer_claims) claims.push_back({c.src, c.dst, c.can_access_peer});
    report.bandwidth->p2p_pairs = classify_p2p_pairs(claims, report.bandwidth->sweeps);
  }

  // One path: its sweep record goes into the report first, each size as it finishes.
  void run_one(const ProbeContext& ctx, report::Report& report, CopyEngine& engine,
               const std::optional<ExpectedRate>& expected) {
    auto& sweeps = report.bandwidth->sweeps;
    sweeps.push_back(engine.describe());
    std::size_t at = sweeps.size() - 1;
    if (expected) {
      sweeps[at].expected_gbps = expected->gbps;
      sweeps[at].expected_basis = expected->basis;
    }
    SweepOptions options = request_.sweep;
    if (sweeps[at].engine == report::BandwidthEngine::cuda) options.windows = ctx.windows;
    bool capped = false;
    options.sizes = cap_sizes(options.sizes, engine.max_bytes(), capped);
    if (options.sizes.empty()) {
      sweeps[at].status = report::SweepStatus::unsupported;
      sweeps[at].reason = "no size fits: the buffers exceed free memory or the locked-memory limit (ulimit -l)";
      return;
    }
    if (capped)
      sweeps[at].notes.push_back(fmt::format("sizes capped at {}: larger buffers do not fit in memory (or the "
                                             "locked-memory limit)",
                                             format_bytes(engine.max_bytes())));
    std::string label = fmt::format("bandwidth {} {} {}->{}", to_string(sweeps[at].engine), to_string(sweeps[at].kind), sweeps[at].src, sweeps[at].dst);
    if (sweeps[at].threads && *sweeps[at].threads > 1) label += fmt::format(" x{}", *sweeps[at].threads);
    if (sweeps[at].memory_kind == report::MemoryKind::locked) label += " locked";
    ctx.progress.update(label + "...");
    auto finish = [&](report::SweepStatus status, std::optional<std::string> reason) {
      sweeps[at].status = status;
      sweeps[at].reason = std::move(reason);
      sweeps[at].fit = fit_sweep(sweeps[at]);
      sweeps[at].buffers = engine.buffers();
      for (auto& note : engine.timing_notes()) sweeps[at].notes.push_back(std::move(note));
      note_page_backing(sweeps[at]);
      engine.release();
    };
    try {
      run_sweep(
          engine, options, [&](const report::BandwidthPoint& p) { sweeps[at].points.push_back(p); },
          [&](std::uint64_t bytes, std::size_t done, std::size_t total) {
            ctx.progress.update(fmt::format("{}: {} ({}/{})", label, format_size_label(bytes), done, total));
          });
      finish(report::SweepStatus::complete, std::nullopt);
    } catch (const InterruptedError&) {
      finish(report::SweepStatus::interrupted, "interrupted: the finished sizes are kept");
      throw;
    } catch (const UnsupportedError& e) {
      finish(report::SweepStatus::unsupported, e.what());
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      finish(report::SweepStatus::failed, e.what());
    }
  }

  // What the kernel gave the buffers, when it is not one backing or not what was asked for.
  void note_page_backing(report::BandwidthSweep& s) const {
    if (auto mixed = report::mixed_page_backing(s))
      s.notes.push_back(fmt::format("buffers got mixed page backing ({}): sizes ran with different TLB costs; "
                                    "--pages 4k or 2m asks for one backing",
                                    *mixed));
    if (s.pages != PagePolicy::huge) return;
    for (const auto& b : s.buffers) {
      auto f = report::huge_page_fraction(b);
      if (f && *f < 0.9)
        s.notes.push_back(fmt::format("asked for 2 MiB pages; the kernel backed {} with {:.0f}% (transparent huge pages: {})",
                                      to_string(b.role), 100 * *f,
                                      thp_mode_ ? to_string(*thp_mode_) : "unknown"));
    }
  }

  BandwidthRequest request_;
  std::shared_ptr<const NumaPlacement> numa_;
  std::optional<report::ThpMode> thp_mode_;
};

}  // namespace

std::unique_ptr<Probe> make_bandwidth_probe(BandwidthRequest request) {
  validate_request(request);
  return std::make_unique<BandwidthProbe>(std::move(request));
}

}  // namespace interprobe
