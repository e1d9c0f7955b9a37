#include "probes/compute/pattern.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace interprobe {

double gemm_tolerance(report::ComputeDtype dtype) {
  using report::ComputeDtype;
  switch (dtype) {
    case ComputeDtype::f32: return 1e-5;   // exact sums; room for a TF32-like path would be 1e-3
    case ComputeDtype::bf16:
    case ComputeDtype::f16: return 1e-3;   // products exact; a half-precision accumulator would not be
    case ComputeDtype::fp8_e4m3: return 1e-2;
  }
  return 1e-3;
}

std::vector<OutputIndex> check_indices(const GemmShape& shape, int count) {
  std::vector<OutputIndex> out;
  if (shape.m <= 0 || shape.n <= 0) return out;
  auto add = [&](std::int64_t i, std::int64_t j) {
    OutputIndex idx{std::clamp<std::int64_t>(i, 0, shape.m - 1), std::clamp<std::int64_t>(j, 0, shape.n - 1)};
    for (const auto& o : out)
      if (o.row == idx.row && o.col == idx.col) return;
    out.push_back(idx);
  };
  // Corners and the middle catch a wrong leading dimension or a partial GEMM.
  add(0, 0);
  add(0, shape.n - 1);
  add(shape.m - 1, 0);
  add(shape.m - 1, shape.n - 1);
  add(shape.m / 2, shape.n / 2);
  std::mt19937_64 rng(0xc0ffee ^ static_cast<std::uint64_t>(shape.m * 31 + shape.n * 17 + shape.k));
  for (int tries = 0; static_cast<int>(out.size()) < count && tries < count * 4; ++tries)
    add(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(shape.m)),
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(shape.n)));
  return out;
}

ReferenceValue reference_output(const GemmShape& shape, OutputIndex index) {
  ReferenceValue r;
  for (std::int64_t k = 0; k < shape.k; ++k) {
    double x = compute_pattern_value(GemmOperand::x, index.row * shape.k + k);
    double w = compute_pattern_value(GemmOperand::w, index.col * shape.k + k);
    r.value += x * w;
    r.magnitude += std::fabs(x * w);
  }
  return r;
}

report::GemmCheck check_gemm(ComputeEngine& engine, const GemmShape& shape, report::ComputeDtype dtype) {
  report::GemmCheck check;
  check.tolerance = gemm_tolerance(dtype);
  auto indices = check_indices(shape);
  auto values = engine.read_outputs(indices);
  check.passed = values.size() == indices.size() && !indices.empty();
  for (std::size_t i = 0; i < indices.size() && i < values.size(); ++i) {
    ReferenceValue ref = reference_output(shape, indices[i]);
    // All-zero rows of the pattern have magnitude 0: any output but 0 is then an error of 1.
    double error = std::fabs(values[i] - ref.value) / std::max(ref.magnitude, 1.0);
    if (!std::isfinite(values[i])) error = INFINITY;
    check.max_relative_error = std::max(check.max_relative_error, error);
    ++check.elements_checked;
  }
  if (!(check.max_relative_error <= check.tolerance)) check.passed = false;
  if (!std::isfinite(check.max_relative_error)) check.max_relative_error = 1e300;  // JSON has no infinity
  return check;
}

}  // namespace interprobe
