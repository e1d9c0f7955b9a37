// Issue 12: the inventory commands open no vendor library (NVML only when the PCI bus shows an
// NVIDIA GPU), no MPI and none of hwloc's plugins. What the process loaded is logged by an
// rtld-audit library (tests/support/open_log_audit.c, LD_AUDIT), which also sees objects that
// were opened and closed again before exit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/json.hpp"
#include "support/run_binary.hpp"

using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

namespace {

// What an inventory command must never load. libnvidia-ml is checked separately: the topology
// and virtualization probes open it on a live machine whose PCI bus shows an NVIDIA GPU.
const char* const kNeverInInventory[] = {"libcuda.so", "libnccl", "libcublas", "libmpi", "libopen-pal", "libopen-rte",
                                         "libOpenCL", "libX11", "libXNVCtrl", "libpciaccess", "/hwloc_"};

struct Opened {
  interprobe::testing::Process process;
  std::vector<std::string> objects;  // every object the loader mapped, in order
};

Opened run_logged(const std::vector<std::string>& args) {
  if (INTERPROBE_SANITIZED) return {};  // the caller skips: see tests/cli/CMakeLists.txt
  char tmpl[] = "/tmp/interprobe-openlog-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd >= 0) ::close(fd);
  Opened out;
  out.process = run_interprobe(args, {std::string("LD_AUDIT=") + INTERPROBE_OPEN_LOG_AUDIT, std::string("INTERPROBE_OPEN_LOG=") + tmpl});
  std::ifstream in(tmpl);
  for (std::string line; std::getline(in, line);) out.objects.push_back(line);
  fs::remove(tmpl);
  return out;
}

bool live_bus_has_nvidia_gpu() {
  std::error_code ec;
  for (const auto& dev : fs::directory_iterator("/sys/bus/pci/devices", ec)) {
    std::ifstream vendor(dev.path() / "vendor"), cls(dev.path() / "class");
    std::string v, c;
    vendor >> v;
    cls >> c;
    if (v == "0x10de" && (c.rfind("0x0300", 0) == 0 || c.rfind("0x0302", 0) == 0)) return true;
  }
  return false;
}

// Fails the test naming each forbidden object; `allow_nvml` for a live NVIDIA machine.
void expect_no_vendor_library(const Opened& run, const std::string& what, bool allow_nvml) {
  ASSERT_EQ(run.process.exit_code, 0) << what << ": " << run.process.err;
  ASSERT_FALSE(run.objects.empty()) << what << ": the audit log is empty: LD_AUDIT=" << INTERPROBE_OPEN_LOG_AUDIT
                                    << " was not honoured";
  bool saw_libc = false;
  for (const auto& object : run.objects) {
    saw_libc = saw_libc || object.find("libc.so") != std::string::npos;
    for (const char* bad : kNeverInInventory) EXPECT_EQ(object.find(bad), std::string::npos) << what << " loaded " << object;
    if (!allow_nvml) {
      EXPECT_EQ(object.find("libnvidia-ml"), std::string::npos) << what << " loaded " << object;
    }
  }
  EXPECT_TRUE(saw_libc) << what << ": the log misses libc, so it does not list what was loaded";
}

}  // namespace

TEST(LibraryFootprint, TopoOnAFixtureWithEightNvidiaGpusOpensNoVendorLibrary) {
  if (INTERPROBE_SANITIZED) GTEST_SKIP() << "LD_AUDIT library outside the sanitizer runtime (tests/cli/CMakeLists.txt)";
  auto run = run_logged({"topo", "--root", std::string(INTERPROBE_FIXTURES) + "/topology/hgx-h100-nvswitch", "--json", "-q"});
  expect_no_vendor_library(run, "topo --root hgx-h100-nvswitch", /*allow_nvml=*/false);
  auto r = interprobe::report::parse_report_text(run.process.out, "stdout");
  ASSERT_TRUE(r.topology);
  EXPECT_EQ(r.topology->gpus.size(), 8u);  // the GPUs were seen, from the tree and nvml.json alone
  EXPECT_TRUE(r.tool.libraries.empty());
}

TEST(LibraryFootprint, LiveInventoryCommandsOpenNoVendorLibraryMpiOrHwlocPlugin) {
  if (INTERPROBE_SANITIZED) GTEST_SKIP() << "LD_AUDIT library outside the sanitizer runtime (tests/cli/CMakeLists.txt)";
  const bool nvidia = live_bus_has_nvidia_gpu();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"topo", "--json", "-q"},
           {"virt", "--json", "-q"},
           {"run", "--only", "system,topology,virtualization", "--json", "-q"}}) {
    std::string what = args.front() + (args.front() == "run" ? " --only system,topology,virtualization" : "") + " (live)";
    auto run = run_logged(args);
    expect_no_vendor_library(run, what, nvidia);
    if (run.process.exit_code != 0) continue;
    // The header lists what was opened: nothing, or NVML on an NVIDIA machine.
    auto r = interprobe::report::parse_report_text(run.process.out, "stdout");
    for (const auto& [name, lib] : r.tool.libraries) EXPECT_EQ(name, "nvml") << what;
    if (r.tool.libraries.empty()) {
      EXPECT_TRUE(r.tool.libraries_not_probed) << what;
    }
  }
}

TEST(LibraryFootprint, VersionAndVerboseNameLibrariesWithoutLoadingThem) {
  if (INTERPROBE_SANITIZED) GTEST_SKIP() << "LD_AUDIT library outside the sanitizer runtime (tests/cli/CMakeLists.txt)";
  for (const auto& args : std::vector<std::vector<std::string>>{{"--version"}, {"topo", "--verbose", "--json", "-q"}}) {
    auto run = run_logged(args);
    expect_no_vendor_library(run, args.front() + (args.size() > 1 ? " --verbose" : ""), /*allow_nvml=*/live_bus_has_nvidia_gpu());
  }
  auto verbose = run_interprobe({"topo", "--verbose", "--json", "-q"});
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  auto r = interprobe::report::parse_report_text(verbose.out, "stdout");
  for (const char* key : {"cuda", "nvml", "nccl", "cublaslt", "cudart"}) EXPECT_TRUE(r.tool.libraries.count(key)) << key;
}

TEST(LibraryFootprint, WithoutItsMpiModuleTheBinaryRunsAndAllreduceMpiSaysWhatIsMissing) {
  // A copy of the binary alone stands for a machine without Open MPI: libmpi is reached only
  // through interprobe-mpi.so beside it, so everything but `allreduce --backend mpi` works.
  auto version = run_interprobe({"--version"});
  if (version.out.find("mpi=yes") == std::string::npos) GTEST_SKIP() << "built without MPI";
  char tmpl[] = "/tmp/interprobe-nompi-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  fs::copy_file(INTERPROBE_BINARY, dir / "interprobe");
  auto virt = interprobe::testing::run_binary((dir / "interprobe").string(), {"virt", "--json", "-q"});
  EXPECT_EQ(virt.exit_code, 0) << virt.err;
  auto mpi = interprobe::testing::run_binary((dir / "interprobe").string(), {"allreduce", "--backend", "mpi", "-q"});
  EXPECT_EQ(mpi.exit_code, 4) << mpi.err;
  EXPECT_NE(mpi.err.find("interprobe-mpi.so is missing"), std::string::npos) << mpi.err;
  EXPECT_NE(mpi.err.find((dir / "interprobe-mpi.so").string()), std::string::npos) << mpi.err;
  fs::remove_all(dir);
}
