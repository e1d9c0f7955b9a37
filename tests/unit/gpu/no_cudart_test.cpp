// The GPU paths reach CUDA only through the driver library opened at run time: no CUDA runtime
// (cudart) in the binary and no link-time libcuda symbol in the GPU libraries.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>


namespace {

// Symbols `nm` lists for `file` whose names match `pattern`; nullopt-like "?" when nm failed.
std::string matching_symbols(const std::string& args, const std::string& file, const std::regex& pattern, bool& ran) {
  std::string cmd = "nm " + args + " '" + file + "' 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ran = pipe != nullptr;
  if (!pipe) return "";
  std::string out;
  char line[4096];
  int lines = 0;
  while (std::fgets(line, sizeof line, pipe)) {
    ++lines;
    std::string s(line);
    if (std::regex_search(s, pattern)) out += s;
  }
  ran = ::pclose(pipe) == 0 && lines > 0;
  return out;
}

// cudart's API (cudaMalloc, cudaGetDeviceCount ...) or the driver's (cuInit, cuMemAlloc_v2 ...).
const std::regex kCudaRuntime(R"(\s(cuda[A-Z]\w*|__cuda\w*|cudart\w*)\s*$)");
const std::regex kCudaDriver(R"(\s(cu[A-Z]\w*)\s*$)");
// cuBLASLt (cublasLtMatmul ...): opened at run time by the compute engine, never linked.
const std::regex kCublasLt(R"(\s(cublas\w*)\s*$)");

TEST(NoCudart, TheGpuLibrariesNeedNeitherTheRuntimeNorALinkedDriver) {
  for (const char* lib : {INTERPROBE_LIB_PROBES_GPU, INTERPROBE_LIB_PROBES_BANDWIDTH, INTERPROBE_LIB_PROBES_COLLECTIVE,
                          INTERPROBE_LIB_PROBES_COMPUTE}) {
    bool ran = false;
    auto undefined = matching_symbols("-u", lib, kCudaRuntime, ran);
    if (!ran) GTEST_SKIP() << "nm is not available";
    EXPECT_EQ(undefined, "") << lib;
    EXPECT_EQ(matching_symbols("-u", lib, kCudaDriver, ran), "") << lib;
    EXPECT_EQ(matching_symbols("-u", lib, kCublasLt, ran), "") << lib;
  }
}

TEST(NoCudart, TheBinaryHasNoCudartSymbols) {
  bool ran = false;
  auto symbols = matching_symbols("", INTERPROBE_BINARY, kCudaRuntime, ran);
  if (!ran) GTEST_SKIP() << "nm is not available or the binary is stripped";
  EXPECT_EQ(symbols, "");
  EXPECT_EQ(matching_symbols("-D --undefined-only", INTERPROBE_BINARY, kCudaDriver, ran), "") << "libcuda linked";
}

}  // namespace
