#pragma once
// One cuBLASLt GEMM of the cuda compute engine, described and planned: descriptors for
// Y = X . W^T in the "TN" layout, the heuristic's algorithm, and the host-side encoding of the
// pattern into the dtype's bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "probes/compute/compute_engine.hpp"
#include "probes/compute/cublaslt_library.hpp"

namespace interprobe::cublaslt {

// cudaDataType_t of a compute dtype (f32 included, though the engine does not run it).
int data_type_of(report::ComputeDtype dtype);
int element_bytes_of(report::ComputeDtype dtype);
// `values` in the dtype's encoding (bf16 and f16 round to nearest even; fp8 e4m3 saturates).
std::vector<unsigned char> encode(report::ComputeDtype dtype, const std::vector<float>& values);

// The algorithm the heuristic chose, as the report records it.
struct ChosenAlgo {
  int offered = 0;  // how many algorithms the heuristic returned
  std::int32_t id = -1, split_k = 1;
  std::uint32_t tile = 0, stages = 0;
  std::uint64_t workspace_bytes = 0;
  float waves = 0;
  // "algo 21 (tile 20, stages 22, split-K 1), workspace 0 B, 0.31 waves, 1st of 2 offered"
  std::string text() const;
};

// The descriptors of one GEMM shape and dtype; destroyed with it.
class GemmPlan {
 public:
  GemmPlan(const Library& lib, Handle handle, const GemmShape& shape, report::ComputeDtype dtype,
           std::uint64_t max_workspace_bytes);
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  // Asks the heuristic; false (with `status`) when it offers nothing for this shape and dtype.
  bool choose(Status& status);
  const ChosenAlgo& chosen() const { return chosen_; }
  // Queues one GEMM on `stream`: y = x . w^T.
  void run(const void* x, const void* w, void* y, void* workspace, std::uint64_t workspace_bytes, cu::Stream stream) const;

 private:
  void destroy() noexcept;
  const Library& lib_;
  Handle handle_;
  std::uint64_t max_workspace_;
  MatmulDesc desc_ = nullptr;
  MatrixLayout a_ = nullptr, b_ = nullptr, d_ = nullptr;
  MatmulPreference pref_ = nullptr;
  HeuristicResult result_{};
  ChosenAlgo chosen_;
};

}  // namespace interprobe::cublaslt
