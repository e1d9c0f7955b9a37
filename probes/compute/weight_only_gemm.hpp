#pragma once
// A GEMM whose weights are kept in a dtype the CPU does not multiply in (bf16 without bf16 BLAS
// kernels, fp8 on any x86): each thread decodes a block of weight rows to f32 into a buffer that
// stays in its cache and multiplies it with a single-threaded cblas_sgemm. This is how a CPU runs
// a bf16 or fp8 checkpoint: memory traffic at the stored width, arithmetic in f32, so decode
// steps (few rows of X) cost the narrow weights' bytes and large batches cost f32 FLOPs.
#include <cstdint>
#include <vector>

#include "common/fork_join_pool.hpp"
#include "model/compute.hpp"

namespace interprobe {

// True for the dtypes WeightOnlyGemm decodes: bf16 and fp8_e4m3.
bool weight_only_decodes(report::ComputeDtype dtype);

class WeightOnlyGemm {
 public:
  // W: n x k row-major, each element `dtype` as cublaslt::encode() writes it (probes/compute/cuda_gemm_plan.hpp);
  // `workers`: the threads of the pool run() will be given.
  void set_weights(report::ComputeDtype dtype, std::vector<unsigned char> encoded, std::int64_t n, std::int64_t k,
                   unsigned workers);
  // Y (m x n, row-major) = X (m x k, row-major) . W^T on `pool`, each worker a share of W's rows.
  // OpenBLAS must run one thread per call here: the pool's threads are the parallelism.
  void run(ForkJoinPool& pool, const float* x, std::int64_t m, float* y);
  void clear();

 private:
  void decode_rows(std::int64_t first_row, std::int64_t rows, float* out) const;

  report::ComputeDtype dtype_ = report::ComputeDtype::bf16;
  std::vector<unsigned char> weights_;
  std::int64_t n_ = 0, k_ = 0, block_rows_ = 1;
  std::vector<std::vector<float>> scratch_;  // one decoded block per worker
  float e4m3_[256] = {};
};

}  // namespace interprobe
