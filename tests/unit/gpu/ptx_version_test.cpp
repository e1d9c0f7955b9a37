// Every PTX the repository or the binary carries is at ISA 8.0 or older: what a CUDA 12.0 driver
// (r525) JIT-compiles. nvcc 13 writes 9.0 by default (scripts/regenerate-ptx lowers it).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "probes/bandwidth/cuda_kernels.hpp"

namespace {

constexpr int kMaxIsa = 80;  // PTX ISA 8.0

// Every .version in a PTX text, as major*10 + minor.
std::vector<int> ptx_versions(const std::string& text) {
  static const std::regex version(R"((^|\n)\s*\.version\s+(\d+)\.(\d+))");
  std::vector<int> out;
  for (std::sregex_iterator it(text.begin(), text.end(), version), end; it != end; ++it)
    out.push_back(std::stoi((*it)[2]) * 10 + std::stoi((*it)[3]));
  return out;
}

TEST(PtxVersion, TheCheckSeesANewerIsa) {
  EXPECT_EQ(ptx_versions("//\n.version 9.0\n.target sm_75\n"), std::vector<int>{90});
  EXPECT_EQ(ptx_versions(".version 8.0\n"), std::vector<int>{80});
}

TEST(PtxVersion, EveryPtxFileInTheRepositoryIsAtMostIsa8_0) {
  namespace fs = std::filesystem;
  int files = 0;
  fs::path root(INTERPROBE_SOURCE_DIR);
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it) {
    auto name = it->path().filename().string();
    if (it->is_directory() && (name == ".git" || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->path().extension() != ".ptx") continue;
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    auto versions = ptx_versions(text.str());
    EXPECT_FALSE(versions.empty()) << it->path() << " has no .version line";
    for (int v : versions) EXPECT_LE(v, kMaxIsa) << it->path() << ": .version " << v / 10 << "." << v % 10;
    ++files;
  }
  EXPECT_GE(files, 1) << "the copy engine's kernels (probes/bandwidth/kernels/cuda_kernels.ptx) were not found";
}

TEST(PtxVersion, ThePtxCompiledIntoTheBinaryIsAtMostIsa8_0) {
  auto versions = ptx_versions(interprobe::cuda_kernels::kPtx);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_LE(versions[0], kMaxIsa);
  for (const char* entry : {"interprobe_hold", "interprobe_copy", "interprobe_fill_pattern", "interprobe_count_mismatches"})
    EXPECT_NE(std::string(interprobe::cuda_kernels::kPtx).find(std::string(".entry ") + entry), std::string::npos) << entry;
}

// Issue 31 point 8: nvbandwidth's SM copy (stridingMemcpyKernel) keeps 12 16-byte loads in flight
// per thread; a kernel that loads one and stores it before the next waits a round trip per 16 bytes
// and reads low against it. The binary's interprobe_copy: 12 vector loads before its first store.
// (The simulator runs the kernel by name on the host, so the PTX itself is what is checked.)
TEST(PtxKernels, TheSmCopyKeepsTwelveLoadsInFlightPerThreadAsNvbandwidth) {
  std::string ptx = interprobe::cuda_kernels::kPtx;
  auto begin = ptx.find(".entry interprobe_copy");
  ASSERT_NE(begin, std::string::npos);
  auto end = ptx.find("\n}", begin);
  std::string body = ptx.substr(begin, end - begin);
  auto first_store = body.find("st.global.v4");
  ASSERT_NE(first_store, std::string::npos);
  int loads_before = 0;
  for (auto at = body.find("ld.global.v4"); at < first_store; at = body.find("ld.global.v4", at + 1)) ++loads_before;
  EXPECT_EQ(loads_before, 12) << body;
}

}  // namespace
