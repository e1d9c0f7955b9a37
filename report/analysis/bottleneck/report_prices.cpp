#include "report/analysis/bottleneck/report_prices.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace interprobe::bottleneck {

namespace {

using report::ComputeDtype;

double element_bytes(ComputeDtype d) {
  switch (d) {
    case ComputeDtype::f32: return 4;
    case ComputeDtype::bf16:
    case ComputeDtype::f16: return 2;
    case ComputeDtype::fp8_e4m3: return 1;
  }
  return 4;
}

// The measured dtypes that can stand in for a weight dtype, best first.
std::vector<ComputeDtype> stand_ins(workload::WeightDtype d) {
  switch (d) {
    case workload::WeightDtype::bf16: return {ComputeDtype::bf16, ComputeDtype::f16, ComputeDtype::f32};
    case workload::WeightDtype::fp8: return {ComputeDtype::fp8_e4m3, ComputeDtype::bf16, ComputeDtype::f16, ComputeDtype::f32};
    case workload::WeightDtype::nvfp4: return {ComputeDtype::fp8_e4m3, ComputeDtype::bf16, ComputeDtype::f16, ComputeDtype::f32};
  }
  return {};
}

const report::ComputeEngineResult* pick_engine(const report::Report& r) {
  if (!r.compute) return nullptr;
  const report::ComputeEngineResult* best = nullptr;
  for (const auto& e : r.compute->engines) {
    if (e.points.empty()) continue;
    if (!best || (e.engine == report::ComputeEngineKind::cuda && best->engine != report::ComputeEngineKind::cuda)) best = &e;
  }
  return best;
}

// A sweep its writer marked as constructed (a fixture, an example) was not measured: its prices
// are assumed, whatever the curve's own interpolation says.
bool constructed(const report::AllreduceSweep& s) {
  return std::any_of(s.notes.begin(), s.notes.end(),
                     [](const std::string& n) { return n.find("constructed") != std::string::npos; });
}

}  // namespace

ReportPrices::ReportPrices(const report::Report& report) : report_(report), engine_(pick_engine(report)) {
  if (!engine_) return;
  std::map<ComputeDtype, std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<double, double>>>> raw;
  for (const auto& p : engine_->points)
    if (p.timing.median_us > 0 && (!p.check || p.check->passed))
      raw[p.dtype][{p.n, p.k}].push_back({static_cast<double>(p.m), p.timing.median_us});
  for (auto& [dtype, shapes] : raw) {
    DtypeCurves c{dtype, {}};
    for (auto& [shape, points] : shapes) c.by_weight_shape.emplace(shape, MeasuredCurve(std::move(points)));
    curves_.push_back(std::move(c));
  }
}

const ReportPrices::DtypeCurves* ReportPrices::curves_for(workload::WeightDtype dtype, double& time_scale,
                                                         Provenance& provenance) const {
  for (ComputeDtype want : stand_ins(dtype))
    for (const auto& c : curves_)
      if (c.dtype == want) {
        // Another dtype stands in with its time scaled by the weight bytes: exact where the GEMM
        // streams its weights (decode), an estimate where it computes.
        time_scale = workload::bytes_per_weight(dtype) / element_bytes(want);
        bool same = std::abs(time_scale - 1) < 1e-9 && !(dtype == workload::WeightDtype::nvfp4);
        provenance = same ? Provenance::measured : Provenance::extrapolated;
        if (same) time_scale = 1;
        return &c;
      }
  return nullptr;
}

std::optional<Price> ReportPrices::gemm(const workload::GemmOp& op) const {
  double scale = 1;
  Provenance stand_in = Provenance::measured;
  const DtypeCurves* curves = curves_for(op.dtype, scale, stand_in);
  if (!curves || curves->by_weight_shape.empty()) return std::nullopt;
  auto exact = curves->by_weight_shape.find({op.n, op.k});
  if (exact != curves->by_weight_shape.end()) {
    auto v = exact->second.at(static_cast<double>(op.m));
    return Price{v.y * scale, worst(v.provenance, stand_in)};
  }
  // Another weight shape: read each measured shape at this M, then interpolate over the weight
  // size (n·k) in log space, as aiconfigurator does between its measured GEMMs.
  std::vector<std::pair<double, double>> over_size;
  Provenance along_m = Provenance::measured;
  for (const auto& [shape, curve] : curves->by_weight_shape) {
    auto v = curve.at(static_cast<double>(op.m));
    along_m = worst(along_m, v.provenance);
    over_size.push_back({static_cast<double>(shape.first) * static_cast<double>(shape.second), v.y});
  }
  auto v = MeasuredCurve(std::move(over_size)).at(static_cast<double>(op.n) * static_cast<double>(op.k));
  Provenance p = worst(worst(v.provenance == Provenance::measured ? Provenance::interpolated : v.provenance, along_m), stand_in);
  return Price{v.y * scale, p};
}

std::optional<double> ReportPrices::ridge_flop_per_byte(workload::WeightDtype dtype) const {
  if (!engine_ || !engine_->memory_ceiling_gbps || *engine_->memory_ceiling_gbps <= 0) return std::nullopt;
  for (ComputeDtype want : stand_ins(dtype))
    for (const auto& peak : engine_->peaks)
      if (peak.dtype == want && peak.measured_tflops > 0)
        return peak.measured_tflops * 1e12 / (*engine_->memory_ceiling_gbps * 1e9);
  return std::nullopt;
}

const report::AllreduceSweep* ReportPrices::sweep_at(std::int64_t ranks) const {
  if (!report_.collective) return nullptr;
  const report::AllreduceSweep* best = nullptr;
  for (const auto& s : report_.collective->allreduce) {
    if (s.ranks != ranks || s.variant != report::AllreduceVariant::default_ || s.points.empty()) continue;
    if (!best || (s.backend == report::AllreduceBackend::nccl && best->backend != report::AllreduceBackend::nccl)) best = &s;
  }
  return best;
}

// Priced from the slowest rank's time (`time_us`), not the mean over ranks the renderers headline as
// nccl-tests does: a decode step's next layer waits until every rank has the reduced tensor, so the
// step pays the slowest rank. The layout what-ifs (layout_whatif.cpp) read the same field for that reason.
std::optional<Price> ReportPrices::all_reduce(std::int64_t bytes, std::int64_t ranks) const {
  const auto* sweep = sweep_at(ranks);
  if (!sweep) return std::nullopt;
  std::vector<std::pair<double, double>> points;
  for (const auto& p : sweep->points)
    if (!p.in_place && p.wrong_elements == 0) points.push_back({static_cast<double>(p.bytes), p.time_us});
  MeasuredCurve curve(std::move(points));
  if (curve.empty()) return std::nullopt;
  auto v = curve.at(static_cast<double>(bytes));
  return Price{v.y, constructed(*sweep) ? worst(v.provenance, Provenance::assumed) : v.provenance};
}

std::optional<double> ReportPrices::all_reduce_floor_us(std::int64_t ranks) const {
  const auto* sweep = sweep_at(ranks);
  if (!sweep) return std::nullopt;
  std::vector<std::pair<double, double>> points;
  for (const auto& p : sweep->points)
    if (!p.in_place && p.wrong_elements == 0) points.push_back({static_cast<double>(p.bytes), p.time_us});
  return MeasuredCurve(std::move(points)).floor_y();
}

std::optional<Price> ReportPrices::stream_read(double bytes) const {
  if (!engine_ || !engine_->memory_ceiling_gbps || *engine_->memory_ceiling_gbps <= 0) return std::nullopt;
  return Price{bytes / (*engine_->memory_ceiling_gbps * 1e9) * 1e6, Provenance::measured};
}

std::optional<Price> ReportPrices::launches(std::int64_t kernels) const {
  if (!engine_ || !engine_->launch_floor_us) return std::nullopt;
  return Price{*engine_->launch_floor_us * static_cast<double>(kernels), Provenance::measured};
}

std::optional<double> ReportPrices::graph_launch_floor_us() const {
  if (!engine_) return std::nullopt;
  return engine_->launch_floor_graph_us;
}

bool ReportPrices::compute_measured_on(const std::string& device) const {
  return engine_ && engine_->engine == report::ComputeEngineKind::cuda && engine_->device &&
         engine_->device->find(device) != std::string::npos;
}

bool ReportPrices::gpus_are(const std::string& device) const {
  if (!report_.topology || report_.topology->gpus.empty()) return false;
  return std::all_of(report_.topology->gpus.begin(), report_.topology->gpus.end(), [&](const report::Gpu& g) {
    return g.name && g.name->find(device) != std::string::npos;
  });
}

std::vector<std::string> ReportPrices::sources() const {
  std::vector<std::string> out;
  if (engine_)
    out.push_back(fmt::format("GEMMs and memory: the {} compute engine{}", report::to_string(engine_->engine),
                              engine_->device ? " on " + *engine_->device : std::string()));
  if (report_.collective)
    for (const auto& s : report_.collective->allreduce)
      if (s.variant == report::AllreduceVariant::default_ && !s.points.empty())
        out.push_back(fmt::format("all-reduce: {} over {} ranks{}", report::to_string(s.backend), s.ranks,
                                  constructed(s) ? " (constructed, not measured: priced as assumed)" : ""));
  return out;
}

}  // namespace interprobe::bottleneck
