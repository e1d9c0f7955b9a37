// Our declarations of NCCL (probes/collective/nccl_api.hpp) against the real nccl.h, where it is
// installed (INTERPROBE_HAVE_NCCL_H): values and entry point signatures.
#include <gtest/gtest.h>

#include <type_traits>

#include "probes/collective/nccl_api.hpp"

namespace nccl = interprobe::nccl;

#if INTERPROBE_HAVE_NCCL_H
#include <nccl.h>

namespace {

// nccl.h's enums are passed as ints, its unique id is a 128-byte struct by value.
template <class T>
struct Abi {
  using type = T;
};
template <>
struct Abi<ncclResult_t> {
  using type = int;
};
template <>
struct Abi<ncclDataType_t> {
  using type = int;
};
template <>
struct Abi<ncclRedOp_t> {
  using type = int;
};
template <>
struct Abi<ncclUniqueId> {
  using type = nccl::UniqueId;
};
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

#define EXPECT_SAME_ABI(ours, theirs) static_assert(std::is_same_v<abi_t<decltype(&theirs)>, nccl::ours>, #theirs)

EXPECT_SAME_ABI(GetVersionFn, ncclGetVersion);
EXPECT_SAME_ABI(GetErrorStringFn, ncclGetErrorString);
EXPECT_SAME_ABI(GetUniqueIdFn, ncclGetUniqueId);
EXPECT_SAME_ABI(CommInitAllFn, ncclCommInitAll);
EXPECT_SAME_ABI(CommInitRankFn, ncclCommInitRank);
EXPECT_SAME_ABI(CommDestroyFn, ncclCommDestroy);
EXPECT_SAME_ABI(CommAbortFn, ncclCommAbort);
EXPECT_SAME_ABI(CommGetAsyncErrorFn, ncclCommGetAsyncError);
EXPECT_SAME_ABI(AllReduceFn, ncclAllReduce);
EXPECT_SAME_ABI(GroupStartFn, ncclGroupStart);
EXPECT_SAME_ABI(GroupEndFn, ncclGroupEnd);

static_assert(sizeof(ncclUniqueId) == sizeof(nccl::UniqueId) && sizeof(ncclResult_t) == sizeof(nccl::Result));
static_assert(std::is_same_v<ncclComm_t, nccl::Comm>);
static_assert(nccl::kSuccess == ncclSuccess && nccl::kInProgress == ncclInProgress && nccl::kFloat16 == ncclFloat16 &&
              nccl::kFloat32 == ncclFloat32 && nccl::kBfloat16 == ncclBfloat16 && nccl::kSum == ncclSum);

}  // namespace
#endif

TEST(NcclAbi, CheckedAgainstNcclHWhereItIsInstalled) {
#if INTERPROBE_HAVE_NCCL_H
  EXPECT_GE(NCCL_MAJOR, 2);  // the static_asserts above ran against this header
#else
  GTEST_SKIP() << "no nccl.h here: the declarations are checked where it is installed";
#endif
}

TEST(NcclAbi, TheUniqueIdIs128Bytes) { EXPECT_EQ(sizeof(nccl::UniqueId), 128u); }
