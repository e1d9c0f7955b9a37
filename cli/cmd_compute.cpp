// `interprobe compute`: GEMM sweeps at decode and prefill shapes beside the measured ceilings
// (square-GEMM peak, memory read, launch floor), per engine and dtype.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/session.hpp"
#include "probes/compute/compute_probe.hpp"
#include "report/analysis/workload/decode_step.hpp"
#include "report/analysis/workload/model_config.hpp"
#include "common/errors.hpp"
#include "common/text.hpp"

namespace interprobe::cli {

namespace {

struct ComputeOptions {
  std::string engine = "all";
  bool quick = false, full = false;
  std::optional<std::string> shapes, m, dtype, model;
  std::optional<std::int64_t> tp;
  std::optional<unsigned> threads;
  std::optional<std::int64_t> peak_size;
  std::optional<double> target_cv, budget_s;
};

std::int64_t parse_count(std::string_view text, const std::string& option, const std::string& whole) {
  std::string s(trim(text));
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || v < 1)
    throw InputError(fmt::format("{} '{}': '{}' is not a positive whole number", option, whole, s));
  return v;
}

// "4096x4096,28672x4096" -> shapes named by their text.
std::vector<ComputeShape> parse_shapes(const std::string& text) {
  std::vector<ComputeShape> out;
  for (const auto& item : split(text, ',')) {
    std::string s(trim(item));
    auto x = s.find_first_of("xX");
    if (x == std::string::npos)
      throw InputError(fmt::format("--shapes '{}': '{}' is not NxK; give weight shapes like 4096x4096,28672x4096", text, s));
    ComputeShape shape;
    shape.n = parse_count(s.substr(0, x), "--shapes", text);
    shape.k = parse_count(s.substr(x + 1), "--shapes", text);
    shape.name = fmt::format("{}x{}", shape.n, shape.k);
    out.push_back(shape);
  }
  return out;
}

// The distinct weight shapes of one rank of a model at tensor parallelism tp, named by the layer
// they come from ("mlp.gate_up_proj_tp8"), measured in the dtypes --dtype names (default: those
// the engine runs natively); `run` measures each model's own dtypes (cli/workload_compute.hpp).
std::vector<ComputeShape> model_shapes(const std::string& config_path, std::int64_t tp) {
  if (tp < 1) throw InputError(fmt::format("--tp {}: give the tensor-parallel size, 1 or more", tp));
  auto model = workload::read_model_config(config_path);
  std::vector<ComputeShape> out;
  for (const auto& w : workload::weight_shapes(model, tp))
    out.push_back(ComputeShape{fmt::format("{}_tp{}", w.name, tp), w.n, w.k});
  return out;
}

ComputeRequest build_request(const ComputeOptions& o) {
  using report::ComputePlan;
  ComputeRequest r = compute_plan(o.full ? ComputePlan::full : ComputePlan::quick);
  if (o.engine == "all") r.engines = {report::ComputeEngineKind::host, report::ComputeEngineKind::cuda};
  else if (auto engine = report::parse_enum<report::ComputeEngineKind>(o.engine)) r.engines = {*engine};
  else throw InputError(fmt::format("--engine '{}': unknown; use host, cuda or all", o.engine));
  if (o.shapes) {
    r.shapes = parse_shapes(*o.shapes);
    r.plan = ComputePlan::custom;
  }
  if (o.tp && !o.model) throw InputError("--tp needs --model config.json (the model whose layers it divides)");
  if (o.model) {
    r.shapes = model_shapes(*o.model, o.tp.value_or(1));
    r.plan = ComputePlan::custom;
  }
  if (o.m) {
    r.m_values.clear();
    for (const auto& item : split(*o.m, ',')) r.m_values.push_back(parse_count(item, "--m", *o.m));
    r.plan = ComputePlan::custom;
  }
  if (o.dtype) {
    for (const auto& item : split(*o.dtype, ',')) {
      auto d = report::parse_enum<report::ComputeDtype>(trim(item));
      if (!d) throw InputError(fmt::format("--dtype '{}': unknown; use {}", item, report::enum_choices<report::ComputeDtype>()));
      r.dtypes.push_back(*d);
    }
  }
  if (o.threads) {
    if (*o.threads < 1) throw InputError("--threads: give at least 1");
    r.host_threads = *o.threads;
  }
  if (o.peak_size) r.peak_size = *o.peak_size;
  if (o.target_cv) r.sweep.target_cv = *o.target_cv;
  if (o.budget_s) {
    if (!(*o.budget_s > 0) || *o.budget_s > 600) throw InputError(fmt::format("--budget {}: give seconds per point, above 0 and at most 600", *o.budget_s));
    r.sweep.size_budget_s = *o.budget_s;
  }
  validate_compute_request(r);
  return r;
}

}  // namespace

Command add_compute_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<ComputeOptions>();
  Command c;
  c.app = app.add_subcommand("compute", "GEMM sweeps at decode/prefill shapes against the measured peak and memory bandwidth");
  c.app->add_option("--engine", o->engine, "host (OpenBLAS), cuda or all (default all: every engine that can run)");
  auto quick = c.app->add_flag("--quick", o->quick, "gate_up at tp=4 (7168x4096), M = 1..512 (the default)");
  auto full = c.app->add_flag("--full", o->full, "Llama-3-8B layer shapes (qkv, o, gate_up, down), M = 1..8192");
  quick->excludes(full);
  c.app->add_option("--shapes", o->shapes, "Weight shapes NxK, comma-separated, e.g. 4096x4096,28672x4096");
  auto model = c.app->add_option("--model", o->model,
                                 "A Hugging Face config.json: sweep the weight shapes of its layers on one rank (with --tp)");
  model->excludes(c.app->get_option("--shapes"));
  c.app->add_option("--tp", o->tp, "Tensor-parallel size dividing --model's layers (default 1)");
  c.app->add_option("--m", o->m, "Token counts M, comma-separated (default 1,2,4..512; --full adds 1024..8192)");
  c.app->add_option("--dtype", o->dtype, "f32, bf16, f16, fp8_e4m3, comma-separated (default: every dtype the engine runs)");
  c.app->add_option("--threads", o->threads, "Host engine threads (default: every CPU this process may use)");
  c.app->add_option("--peak-size", o->peak_size, "M = N = K of the square peak GEMM (default: host 2048, GPU 8192)");
  c.app->add_option("--target-cv", o->target_cv, "Sample each point until its CV is at most this fraction (default 0.02)")
      ->check(finite_number());
  c.app->add_option("--budget", o->budget_s, "Seconds per point once the minimum samples are taken (default 0.1; 0.5 --full)")
      ->check(finite_number());
  c.execute = [&options, o]() {
    std::vector<std::unique_ptr<Probe>> probes;
    probes.push_back(make_compute_probe(build_request(*o)));
    return run_session(options, probes, UnsupportedPolicy::exit_code_4).exit_code;
  };
  return c;
}

}  // namespace interprobe::cli
