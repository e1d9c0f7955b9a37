// Our declarations of cuBLASLt (probes/compute/cublaslt_api.hpp) against the real cublasLt.h,
// where the toolkit has it (INTERPROBE_HAVE_CUBLASLT_H): values, descriptor sizes and entry point
// signatures.
#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#include "probes/compute/cublaslt_api.hpp"

namespace lt = interprobe::cublaslt;

#if INTERPROBE_HAVE_CUBLASLT_H
#include <cublasLt.h>

namespace {

// cublasLt.h's enums travel as int-sized integers; its opaque descriptors as our same-sized structs.
template <class T>
struct Abi {
  using type = T;
};
#define INTERPROBE_ABI_AS(theirs, ours) \
  template <>                           \
  struct Abi<theirs> {                  \
    using type = ours;                  \
  };
INTERPROBE_ABI_AS(cublasStatus_t, int)
INTERPROBE_ABI_AS(cudaDataType, int)
INTERPROBE_ABI_AS(cublasComputeType_t, int)
INTERPROBE_ABI_AS(cublasLtMatmulDescAttributes_t, int)
INTERPROBE_ABI_AS(cublasLtMatmulPreferenceAttributes_t, int)
INTERPROBE_ABI_AS(cublasLtMatmulAlgoConfigAttributes_t, int)
INTERPROBE_ABI_AS(cublasLtMatrixLayoutOpaque_t, lt::MatrixLayoutOpaque)
INTERPROBE_ABI_AS(cublasLtMatmulDescOpaque_t, lt::MatmulDescOpaque)
INTERPROBE_ABI_AS(cublasLtMatmulPreferenceOpaque_t, lt::MatmulPreferenceOpaque)
INTERPROBE_ABI_AS(cublasLtMatmulAlgo_t, lt::MatmulAlgo)
INTERPROBE_ABI_AS(cublasLtMatmulHeuristicResult_t, lt::HeuristicResult)
INTERPROBE_ABI_AS(cudaStream_t, interprobe::cu::Stream)
#undef INTERPROBE_ABI_AS
template <class T>
struct Abi<T*> {
  using type = typename Abi<T>::type*;
};
template <class T>
struct Abi<const T*> {
  using type = const typename Abi<T>::type*;
};
template <class R, class... A>
struct Abi<R(A...)> {
  using type = typename Abi<R>::type(typename Abi<A>::type...);
};
template <class F>
using abi_t = typename Abi<std::remove_pointer_t<F>>::type;

#define EXPECT_SAME_ABI(ours, theirs) static_assert(std::is_same_v<abi_t<decltype(&theirs)>, lt::ours>, #theirs)

EXPECT_SAME_ABI(CreateFn, cublasLtCreate);
EXPECT_SAME_ABI(DestroyFn, cublasLtDestroy);
EXPECT_SAME_ABI(GetVersionFn, cublasLtGetVersion);
EXPECT_SAME_ABI(GetStatusStringFn, cublasLtGetStatusString);
EXPECT_SAME_ABI(MatmulDescCreateFn, cublasLtMatmulDescCreate);
EXPECT_SAME_ABI(MatmulDescSetAttributeFn, cublasLtMatmulDescSetAttribute);
EXPECT_SAME_ABI(MatmulDescDestroyFn, cublasLtMatmulDescDestroy);
EXPECT_SAME_ABI(MatrixLayoutCreateFn, cublasLtMatrixLayoutCreate);
EXPECT_SAME_ABI(MatrixLayoutDestroyFn, cublasLtMatrixLayoutDestroy);
EXPECT_SAME_ABI(MatmulPreferenceCreateFn, cublasLtMatmulPreferenceCreate);
EXPECT_SAME_ABI(MatmulPreferenceSetAttributeFn, cublasLtMatmulPreferenceSetAttribute);
EXPECT_SAME_ABI(MatmulPreferenceDestroyFn, cublasLtMatmulPreferenceDestroy);
EXPECT_SAME_ABI(MatmulAlgoGetHeuristicFn, cublasLtMatmulAlgoGetHeuristic);
EXPECT_SAME_ABI(MatmulAlgoConfigGetAttributeFn, cublasLtMatmulAlgoConfigGetAttribute);
EXPECT_SAME_ABI(MatmulFn, cublasLtMatmul);

static_assert(std::is_same_v<cublasLtHandle_t, lt::Handle>);
static_assert(sizeof(cublasLtMatrixLayoutOpaque_t) == sizeof(lt::MatrixLayoutOpaque) &&
              sizeof(cublasLtMatmulDescOpaque_t) == sizeof(lt::MatmulDescOpaque) &&
              sizeof(cublasLtMatmulPreferenceOpaque_t) == sizeof(lt::MatmulPreferenceOpaque) &&
              sizeof(cublasLtMatmulAlgo_t) == sizeof(lt::MatmulAlgo));
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == sizeof(lt::HeuristicResult) &&
              offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize) == offsetof(lt::HeuristicResult, workspace_size) &&
              offsetof(cublasLtMatmulHeuristicResult_t, state) == offsetof(lt::HeuristicResult, state) &&
              offsetof(cublasLtMatmulHeuristicResult_t, wavesCount) == offsetof(lt::HeuristicResult, waves_count));
static_assert(lt::kSuccess == CUBLAS_STATUS_SUCCESS && lt::kNotInitialized == CUBLAS_STATUS_NOT_INITIALIZED &&
              lt::kAllocFailed == CUBLAS_STATUS_ALLOC_FAILED && lt::kInvalidValue == CUBLAS_STATUS_INVALID_VALUE &&
              lt::kArchMismatch == CUBLAS_STATUS_ARCH_MISMATCH && lt::kExecutionFailed == CUBLAS_STATUS_EXECUTION_FAILED &&
              lt::kInternalError == CUBLAS_STATUS_INTERNAL_ERROR && lt::kNotSupported == CUBLAS_STATUS_NOT_SUPPORTED);
static_assert(lt::kR32F == CUDA_R_32F && lt::kR16F == CUDA_R_16F && lt::kR16BF == CUDA_R_16BF &&
              lt::kR8FE4M3 == CUDA_R_8F_E4M3);
static_assert(lt::kCompute32F == CUBLAS_COMPUTE_32F && lt::kOpN == CUBLAS_OP_N && lt::kOpT == CUBLAS_OP_T);
static_assert(lt::kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA && lt::kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB &&
              lt::kPrefMaxWorkspaceBytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(lt::kAlgoConfigId == CUBLASLT_ALGO_CONFIG_ID && lt::kAlgoConfigTileId == CUBLASLT_ALGO_CONFIG_TILE_ID &&
              lt::kAlgoConfigSplitkNum == CUBLASLT_ALGO_CONFIG_SPLITK_NUM &&
              lt::kAlgoConfigStagesId == CUBLASLT_ALGO_CONFIG_STAGES_ID);

}  // namespace
#endif

TEST(CublasLtAbi, CheckedAgainstCublasLtHWhereTheToolkitHasIt) {
#if INTERPROBE_HAVE_CUBLASLT_H
  EXPECT_GE(CUBLAS_VER_MAJOR, 12);  // the static_asserts above ran against this header
#else
  GTEST_SKIP() << "no cublasLt.h here: the declarations are checked where the toolkit has it";
#endif
}

TEST(CublasLtAbi, DescriptorsHaveTheSizesOfTheAbi) {
  EXPECT_EQ(sizeof(lt::MatmulAlgo), 64u);
  EXPECT_EQ(sizeof(lt::MatmulDescOpaque), 256u);
  EXPECT_EQ(sizeof(lt::HeuristicResult), 96u);
}
