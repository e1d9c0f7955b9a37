// `interprobe bw`: copy-bandwidth sweeps from bytes to gigabytes, host and GPU paths.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/session.hpp"
#include "probes/bandwidth/bandwidth_probe.hpp"
#include "probes/bandwidth/size_plan.hpp"
#include "common/errors.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

namespace interprobe::cli {

namespace {

struct BwOptions {
  std::string engine = "all";
  bool quick = false, full = false;
  std::optional<std::string> min, max, sizes, target_cv;
  std::optional<double> factor, budget_s;
  std::optional<unsigned> threads;
  std::optional<std::string> pages, memory;
  std::optional<int> passes;
};

// "1%" or "0.01" -> 0.01.
double parse_target_cv(const std::string& text) {
  std::string_view s = trim(text);
  bool percent = !s.empty() && s.back() == '%';
  if (percent) s.remove_suffix(1);
  try {
    std::size_t used = 0;
    double v = std::stod(std::string(s), &used);
    if (used == s.size() && v > 0 && (percent ? v < 100 : v < 1)) return percent ? v / 100 : v;
  } catch (const std::exception&) {
  }
  throw InputError(fmt::format("--target-cv '{}': give a fraction below 1 or a percentage, e.g. 0.01 or 1%", text));
}

BandwidthRequest build_request(const BwOptions& o) {
  using report::BandwidthPlan;
  BandwidthRequest r = bandwidth_plan(o.full ? BandwidthPlan::full : o.quick ? BandwidthPlan::quick : BandwidthPlan::standard);
  if (o.engine == "all") r.engines = {report::BandwidthEngine::host, report::BandwidthEngine::cuda};
  else if (auto engine = report::parse_enum<report::BandwidthEngine>(o.engine)) r.engines = {*engine};
  else throw InputError(fmt::format("--engine '{}': unknown; use host, cuda or all", o.engine));
  if (o.sizes) {
    r.sweep.sizes = parse_size_list(*o.sizes, "--sizes");
    r.plan = BandwidthPlan::custom;
  } else if (o.min || o.max || o.factor) {
    std::uint64_t min = o.min ? parse_size_bytes(*o.min, "--min") : r.sweep.sizes.front();
    std::uint64_t max = o.max ? parse_size_bytes(*o.max, "--max") : r.sweep.sizes.back();
    r.sweep.sizes = geometric_sizes(min, max, o.factor.value_or(2.0));
    r.plan = BandwidthPlan::custom;
  }
  if (o.target_cv) r.sweep.target_cv = parse_target_cv(*o.target_cv);
  if (o.budget_s) {
    if (!(*o.budget_s > 0) || *o.budget_s > 600) throw InputError(fmt::format("--budget {}: give seconds per size, above 0 and at most 600", *o.budget_s));
    r.sweep.size_budget_s = *o.budget_s;
  }
  if (o.threads) {
    if (*o.threads < 1) throw InputError("--threads: give at least 1");
    r.host_threads = *o.threads;
  }
  if (o.pages) r.host_pages = parse_page_policy(*o.pages);
  if (o.passes) r.sweep.passes = *o.passes;
  if (o.memory) {
    if (*o.memory == "pageable") r.host_locked = false;
    else if (*o.memory == "all") r.host_locked = true;
    else throw InputError(fmt::format("--memory '{}': use pageable (skip the locked host sweep) or all", *o.memory));
  }
  validate_request(r);
  return r;
}

}  // namespace

Command add_bw_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<BwOptions>();
  Command c;
  c.app = app.add_subcommand("bw", "Copy bandwidth sweeps: host memcpy and staging, GPU H2D/D2H/D2D/P2P");
  c.app->add_option("--engine", o->engine, "host, cuda or all (default all)");
  auto quick = c.app->add_flag("--quick", o->quick, "4 B .. 256 MiB in x4 steps, short budgets (what `run` uses)");
  auto full = c.app->add_flag("--full", o->full, "4 B .. 4 GiB, every GPU pair in both directions");
  quick->excludes(full);
  auto sizes = c.app->add_option("--sizes", o->sizes, "Comma-separated sizes, e.g. 4,64K,1M,1G (binary suffixes)");
  c.app->add_option("--min", o->min, "Smallest size (default 4)")->excludes(sizes);
  c.app->add_option("--max", o->max, "Largest size (default 1G; 256M with --quick, 4G with --full)")->excludes(sizes);
  c.app->add_option("--factor", o->factor, "Step between sizes (default 2)")->check(finite_number())->excludes(sizes);
  c.app->add_option("--target-cv", o->target_cv, "Sample each size until its CV is at most this (default 1%)")
      ->check(finite_number());
  c.app->add_option("--budget", o->budget_s, "Seconds per size once the minimum samples are taken (default 0.25)")
      ->check(finite_number());
  c.app->add_option("--threads", o->threads, "Host copy threads (default: CPUs of the NUMA node, at most 8)");
  c.app->add_option("--pages", o->pages,
                    "Host buffer pages: auto (the kernel's default), 4k (MADV_NOHUGEPAGE) or 2m (MADV_HUGEPAGE); the "
                    "report records what was granted");
  c.app->add_option("--passes", o->passes, "Passes over the sizes in a shuffled order, samples pooled; host buffers are replaced between passes (default 4; 2 with --quick)");
  c.app->add_option("--memory", o->memory, "Host buffers: all (pageable and locked, default) or pageable");
  c.execute = [&options, o]() {
    std::vector<std::unique_ptr<Probe>> probes;
    probes.push_back(make_bandwidth_probe(build_request(*o)));
    return run_session(options, probes, UnsupportedPolicy::exit_code_4).exit_code;
  };
  return c;
}

}  // namespace interprobe::cli
