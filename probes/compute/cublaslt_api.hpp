#pragma once
// The part of cuBLASLt interprobe calls, declared from its public, stable ABI (cuBLAS 12.x and 13.x
// share every value and signature used here) so that nothing needs cublasLt.h or the CUDA runtime
// headers it pulls in: the cuda compute engine builds on every machine and opens libcublasLt.so at
// run time. tests/unit/gpu/cublaslt_abi_test.cpp checks it against the real cublasLt.h wherever
// the toolkit is installed.
#include <cstddef>
#include <cstdint>

#include "probes/gpu/cuda_driver_api.hpp"

struct cublasLtContext;  // cuBLASLt's opaque handle keeps its name, as in cublasLt.h

namespace interprobe::cublaslt {

using Status = int;  // cublasStatus_t
using Handle = ::cublasLtContext*;

// The semi-opaque descriptors: cublasLt.h gives their sizes; we never look inside.
struct MatrixLayoutOpaque {
  std::uint64_t data[8];
};
struct MatmulDescOpaque {
  std::uint64_t data[32];
};
struct MatmulPreferenceOpaque {
  std::uint64_t data[8];
};
struct MatmulAlgo {
  std::uint64_t data[8];
};
using MatrixLayout = MatrixLayoutOpaque*;
using MatmulDesc = MatmulDescOpaque*;
using MatmulPreference = MatmulPreferenceOpaque*;

// cublasLtMatmulHeuristicResult_t
struct HeuristicResult {
  MatmulAlgo algo;
  std::size_t workspace_size;
  Status state;
  float waves_count;
  int reserved[4];
};

// cublasStatus_t values we name.
inline constexpr Status kSuccess = 0;
inline constexpr Status kNotInitialized = 1;
inline constexpr Status kAllocFailed = 3;
inline constexpr Status kInvalidValue = 7;
inline constexpr Status kArchMismatch = 8;
inline constexpr Status kExecutionFailed = 13;
inline constexpr Status kInternalError = 14;
inline constexpr Status kNotSupported = 15;

// cudaDataType_t (library_types.h).
inline constexpr int kR32F = 0;      // CUDA_R_32F
inline constexpr int kR16F = 2;      // CUDA_R_16F
inline constexpr int kR16BF = 14;    // CUDA_R_16BF
inline constexpr int kR8FE4M3 = 28;  // CUDA_R_8F_E4M3

// cublasComputeType_t and cublasOperation_t.
inline constexpr int kCompute32F = 68;  // CUBLAS_COMPUTE_32F
inline constexpr int kOpN = 0;          // CUBLAS_OP_N
inline constexpr int kOpT = 1;          // CUBLAS_OP_T

// cublasLtMatmulDescAttributes_t (each an int32_t value).
inline constexpr int kDescTransA = 3;  // CUBLASLT_MATMUL_DESC_TRANSA
inline constexpr int kDescTransB = 4;  // CUBLASLT_MATMUL_DESC_TRANSB
// cublasLtMatmulPreferenceAttributes_t (a uint64_t value).
inline constexpr int kPrefMaxWorkspaceBytes = 1;  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
// cublasLtMatmulAlgoConfigAttributes_t: what the report records of the chosen algorithm.
inline constexpr int kAlgoConfigId = 0;         // int32_t
inline constexpr int kAlgoConfigTileId = 1;     // uint32_t (cublasLtMatmulTile_t)
inline constexpr int kAlgoConfigSplitkNum = 2;  // int32_t
inline constexpr int kAlgoConfigStagesId = 6;   // uint32_t (cublasLtMatmulStages_t)

// Entry points. Enums travel as int-sized integers; the stream is the runtime's cudaStream_t,
// the same handle as the driver's CUstream.
using CreateFn = Status(Handle*);
using DestroyFn = Status(Handle);
using GetVersionFn = std::size_t();  // CUBLAS_VERSION: major*10000 + minor*100 + patch
using GetStatusStringFn = const char*(Status);
using MatmulDescCreateFn = Status(MatmulDesc*, int, int);
using MatmulDescSetAttributeFn = Status(MatmulDesc, int, const void*, std::size_t);
using MatmulDescDestroyFn = Status(MatmulDesc);
using MatrixLayoutCreateFn = Status(MatrixLayout*, int, std::uint64_t, std::uint64_t, std::int64_t);
using MatrixLayoutDestroyFn = Status(MatrixLayout);
using MatmulPreferenceCreateFn = Status(MatmulPreference*);
using MatmulPreferenceSetAttributeFn = Status(MatmulPreference, int, const void*, std::size_t);
using MatmulPreferenceDestroyFn = Status(MatmulPreference);
using MatmulAlgoGetHeuristicFn = Status(Handle, MatmulDesc, MatrixLayout, MatrixLayout, MatrixLayout, MatrixLayout,
                                        MatmulPreference, int, HeuristicResult*, int*);
using MatmulAlgoConfigGetAttributeFn = Status(const MatmulAlgo*, int, void*, std::size_t, std::size_t*);
using MatmulFn = Status(Handle, MatmulDesc, const void*, const void*, MatrixLayout, const void*, MatrixLayout,
                        const void*, const void*, MatrixLayout, void*, MatrixLayout, const MatmulAlgo*, void*,
                        std::size_t, cu::Stream);

// X(member, function type, symbol)
#define INTERPROBE_CUBLASLT_ENTRY_POINTS(X)                                                     \
  X(create, CreateFn, "cublasLtCreate")                                                          \
  X(destroy, DestroyFn, "cublasLtDestroy")                                                       \
  X(get_version, GetVersionFn, "cublasLtGetVersion")                                             \
  X(get_status_string, GetStatusStringFn, "cublasLtGetStatusString")                             \
  X(matmul_desc_create, MatmulDescCreateFn, "cublasLtMatmulDescCreate")                          \
  X(matmul_desc_set_attribute, MatmulDescSetAttributeFn, "cublasLtMatmulDescSetAttribute")       \
  X(matmul_desc_destroy, MatmulDescDestroyFn, "cublasLtMatmulDescDestroy")                       \
  X(matrix_layout_create, MatrixLayoutCreateFn, "cublasLtMatrixLayoutCreate")                    \
  X(matrix_layout_destroy, MatrixLayoutDestroyFn, "cublasLtMatrixLayoutDestroy")                 \
  X(preference_create, MatmulPreferenceCreateFn, "cublasLtMatmulPreferenceCreate")               \
  X(preference_set_attribute, MatmulPreferenceSetAttributeFn, "cublasLtMatmulPreferenceSetAttribute") \
  X(preference_destroy, MatmulPreferenceDestroyFn, "cublasLtMatmulPreferenceDestroy")            \
  X(algo_get_heuristic, MatmulAlgoGetHeuristicFn, "cublasLtMatmulAlgoGetHeuristic")              \
  X(algo_config_get_attribute, MatmulAlgoConfigGetAttributeFn, "cublasLtMatmulAlgoConfigGetAttribute") \
  X(matmul, MatmulFn, "cublasLtMatmul")

}  // namespace interprobe::cublaslt
