#pragma once
// The simulated cuBLASLt's arithmetic: element conversions and D = alpha op(A) op(B) + beta C on
// the host in f32, column-major as cuBLASLt lays matrices out.
#include <cstdint>

namespace interprobe::sim {

// cudaDataType_t values the simulator knows.
enum class ElementType { f32 = 0, f16 = 2, bf16 = 14, fp8_e4m3 = 28 };

bool known_element_type(int type);
int element_bytes(ElementType t);
float to_float(ElementType t, const void* base, std::int64_t index);

// One matrix as cublasLtMatrixLayoutCreate describes it (column-major, leading dimension ld).
struct Matrix {
  ElementType type = ElementType::f32;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
};

// Everything cublasLtMatmul needs to run, copied at the call (the call returns before the stream
// runs it).
struct MatmulJob {
  Matrix a, b, c, d;
  bool trans_a = false, trans_b = false;
  const void* pa = nullptr;
  const void* pb = nullptr;
  const void* pc = nullptr;
  void* pd = nullptr;
  float alpha = 1, beta = 0;
  bool corrupt = false;  // faults.corrupt_matmul: every output off by K/4
  std::uint64_t m = 0, n = 0, k = 0;
  // The simulated libcuda's count of writes to memory (interprobe_sim_write_epoch); null: never
  // skip a repeat.
  std::uint64_t (*write_epoch)() = nullptr;
};

// Computes the job. A repeat is skipped: the output last written with the same problem from
// inputs of the same contents (hashed once per write epoch, so weights rotated across copies of
// one pattern count as one), while nothing but GEMMs wrote memory since (a sweep runs thousands
// of identical GEMMs, and the host is far slower than the model).
void run_matmul(const MatmulJob& job);

}  // namespace interprobe::sim
