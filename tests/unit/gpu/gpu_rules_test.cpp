// Findings over the GPU software stack (report/analysis/gpu_rules.cpp) from Report structs, the
// NCCL build's CUDA major read off a library file, and one CLI run against the simulators.
#include <gtest/gtest.h>

#include <fstream>

#include "probes/runtime/nccl_build.hpp"
#include "report/analysis/findings.hpp"
#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

using interprobe::report::Finding;
using interprobe::report::Report;

namespace {

Report machine_with_nvml_gpus(int gpus) {
  Report r;
  r.topology.emplace();
  r.topology->nvml_source = interprobe::report::NvmlSource::live;
  for (int i = 0; i < gpus; ++i) {
    interprobe::report::Gpu g;
    g.index = i;
    g.bdf = "0000:1" + std::to_string(i) + ":00.0";
    g.uuid = "GPU-" + std::to_string(i);
    r.topology->gpus.push_back(g);
  }
  return r;
}

interprobe::report::LibraryInfo library(const char* version, std::optional<std::int64_t> devices = std::nullopt) {
  interprobe::report::LibraryInfo l;
  l.found = true;
  l.path = "/usr/lib/x86_64-linux-gnu/lib.so";
  l.version = version;
  l.device_count = devices;
  return l;
}

const Finding* find(const std::vector<Finding>& all, const std::string& id) {
  for (const auto& f : all)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(GpuRules, NvmlGpusWithADriverThatIsTooOldFail) {
  Report r = machine_with_nvml_gpus(2);
  auto cuda = library("11.8");
  cuda.reason = "CUDA 11.8 is older than 12.0 (r525), the minimum interprobe needs";
  r.tool.libraries["cuda"] = cuda;
  auto findings = interprobe::analysis::derive_findings(r);
  const auto* f = find(findings, "gpu.cuda_unusable");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, interprobe::report::Severity::fail);
  EXPECT_EQ(f->affected.size(), 2u);
  EXPECT_EQ(std::get<std::string>(f->evidence.at("cuda_reason")), *cuda.reason);
  EXPECT_EQ(findings.front().id, "gpu.cuda_unusable");  // most severe first
}

TEST(GpuRules, NvmlGpusWithoutLibcudaOrWithCudaSeeingNoneFail) {
  Report missing = machine_with_nvml_gpus(1);
  interprobe::report::LibraryInfo absent;
  absent.reason = "libcuda.so.1 not found";
  missing.tool.libraries["cuda"] = absent;
  EXPECT_NE(find(interprobe::analysis::derive_findings(missing), "gpu.cuda_unusable"), nullptr);
  Report none = machine_with_nvml_gpus(8);
  none.tool.libraries["cuda"] = library("12.4", 0);
  EXPECT_NE(find(interprobe::analysis::derive_findings(none), "gpu.cuda_unusable"), nullptr);
}

TEST(GpuRules, UsableCudaRecordedNvmlOrNoCudaAttemptIsNoFinding) {
  Report fine = machine_with_nvml_gpus(8);
  fine.tool.libraries["cuda"] = library("12.4", 8);
  EXPECT_EQ(find(interprobe::analysis::derive_findings(fine), "gpu.cuda_unusable"), nullptr);
  Report recorded = machine_with_nvml_gpus(8);  // --root replay: NVML of another machine
  recorded.topology->nvml_source = interprobe::report::NvmlSource::recorded;
  recorded.tool.libraries["cuda"] = library("11.8", 0);
  EXPECT_EQ(find(interprobe::analysis::derive_findings(recorded), "gpu.cuda_unusable"), nullptr);
  Report untried = machine_with_nvml_gpus(8);  // e.g. `topo`: CUDA never asked
  EXPECT_EQ(find(interprobe::analysis::derive_findings(untried), "gpu.cuda_unusable"), nullptr);
  Report no_gpus = machine_with_nvml_gpus(0);
  no_gpus.tool.libraries["cuda"] = library("12.4", 0);
  EXPECT_EQ(find(interprobe::analysis::derive_findings(no_gpus), "gpu.cuda_unusable"), nullptr);
}

TEST(GpuRules, NcclForANewerCudaThanTheDriverWarnsNamingTheFix) {
  Report r;
  r.tool.libraries["cuda"] = library("12.4", 8);
  auto nccl = library("2.28.9");
  nccl.cuda_major = 13;
  r.tool.libraries["nccl"] = nccl;
  auto findings = interprobe::analysis::derive_findings(r);
  const auto* f = find(findings, "libraries.nccl_cuda_mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, interprobe::report::Severity::warn);
  EXPECT_NE(f->remedy.find("--nccl-lib"), std::string::npos);
  EXPECT_NE(f->remedy.find("nvidia-nccl-cu12"), std::string::npos);
  EXPECT_EQ(std::get<std::int64_t>(f->evidence.at("nccl_cuda_major")), 13);
}

TEST(GpuRules, NcclForTheSameOrAnOlderCudaIsFine) {
  for (std::int64_t major : {12, 11}) {
    Report r;
    r.tool.libraries["cuda"] = library("12.4", 8);
    auto nccl = library("2.23.4");
    nccl.cuda_major = major;
    r.tool.libraries["nccl"] = nccl;
    EXPECT_EQ(find(interprobe::analysis::derive_findings(r), "libraries.nccl_cuda_mismatch"), nullptr) << major;
  }
}

TEST(NcclBuild, TheCudaMajorComesFromTheCompiledInVersionString) {
  using interprobe::nccl_cuda_major_in;
  using namespace std::string_literals;
  EXPECT_EQ(nccl_cuda_major_in("\x7f" "ELF...\0NCCL version 2.28.9+cuda13.0\0more"s), 13);
  EXPECT_EQ(nccl_cuda_major_in("NCCL version %s\0NCCL version 2.21.5+cuda12.4\0"s), 12);  // a format first
  EXPECT_EQ(nccl_cuda_major_in("NCCL version 2.21.5\0+cuda12.4"s), std::nullopt);         // not one string
  EXPECT_EQ(nccl_cuda_major_in("no version here"), std::nullopt);
  interprobe::testing::TempTree tree;
  auto file = (tree.path() / "libnccl.so.2").string();
  std::ofstream(file, std::ios::binary) << std::string(100000, '\0') << "NCCL version 2.23.4+cuda12.2" << '\0';
  EXPECT_EQ(interprobe::nccl_cuda_major_of_file(file), 12);
  EXPECT_EQ(interprobe::nccl_cuda_major_of_file((tree.path() / "absent").string()), std::nullopt);
}

// The simulated libnccl built "for CUDA 13" behind a simulated CUDA 12.4 driver: the report
// records the major and warns.
TEST(GpuRules, ASimulatedCuda13NcclOnACuda12DriverWarnsInTheReport) {
  interprobe::testing::TempTree tree;
  auto description = (tree.path() / "machine.json").string();
  std::ofstream(description) << R"({"devices": [{}, {}], "nccl": {"cuda_major": 13}})";
  auto p = interprobe::testing::run_interprobe(
      {"allreduce", "--backend", "nccl", "--sizes", "4K", "--iters", "2", "--samples", "1", "--warmup", "1", "--json"},
      {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA, std::string("INTERPROBE_NCCL_LIB=") + INTERPROBE_SIM_NCCL,
       "INTERPROBE_SIM_CONFIG=" + description});
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.tool.libraries.count("nccl")) << p.err;
  EXPECT_EQ(r.tool.libraries.at("nccl").cuda_major, 13);
  const auto* f = find(r.findings, "libraries.nccl_cuda_mismatch");
  ASSERT_NE(f, nullptr) << p.out;
  EXPECT_NE(f->title.find("CUDA 13"), std::string::npos);
}

// Issue 36: the GPU presence contract. A topology with no NVIDIA GPU is a finding (a gate can stop
// on it); GPUs held by no NVIDIA driver, or with the live NVML missing, are one too.
namespace {

// A --root replay (host.live false: NVML of this machine not asked) unless the test says live.
Report inventory_with_gpu_drivers(const std::vector<std::optional<std::string>>& drivers) {
  Report r;
  r.host.live = false;
  r.topology.emplace();
  for (std::size_t i = 0; i < drivers.size(); ++i) {
    interprobe::report::Gpu g;
    g.index = static_cast<std::int64_t>(i);
    g.bdf = "0000:0" + std::to_string(i + 1) + ":00.0";
    r.topology->gpus.push_back(g);
    interprobe::report::PciDevice d;
    d.bdf = g.bdf;
    d.kind = interprobe::report::PciKind::gpu;
    d.driver = drivers[i];
    r.topology->pci_devices.push_back(d);
  }
  return r;
}

}  // namespace

TEST(GpuPresence, NoGpuOnTheBusIsAWarnFindingOnlyWhenTheTopologyWasRead) {
  Report none = inventory_with_gpu_drivers({});
  const auto findings = interprobe::analysis::derive_findings(none);
  const auto* f = find(findings, "gpu.none_on_bus");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, interprobe::report::Severity::warn);
  EXPECT_NE(f->title.find("no NVIDIA GPU on the PCI bus"), std::string::npos);
  EXPECT_EQ(find(interprobe::analysis::derive_findings(Report{}), "gpu.none_on_bus"), nullptr) << "no topology: nothing known";
  EXPECT_EQ(find(interprobe::analysis::derive_findings(inventory_with_gpu_drivers({"nvidia"})), "gpu.none_on_bus"), nullptr);
}

TEST(GpuPresence, GpusWithoutTheNvidiaDriverAreNamed) {
  Report r = inventory_with_gpu_drivers({"nvidia", "nouveau", std::nullopt, "vfio-pci"});
  const auto findings = interprobe::analysis::derive_findings(r);
  const auto* f = find(findings, "gpu.driver_missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->affected, (std::vector<std::string>{"0000:02:00.0", "0000:03:00.0"}));  // vfio-pci: handed to a VM
  EXPECT_NE(f->title.find("2 of 4"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("none, nouveau"), std::string::npos) << f->title;
  EXPECT_EQ(find(interprobe::analysis::derive_findings(inventory_with_gpu_drivers({"nvidia", "vfio-pci"})), "gpu.driver_missing"),
            nullptr);
}

TEST(GpuPresence, LiveGpusWithoutNvmlAreOneFindingNotTwo) {
  Report r = inventory_with_gpu_drivers({"nvidia", "nvidia"});
  r.host.live = true;
  r.topology->nvml_reason = "libnvidia-ml.so.1: cannot open shared object file";
  interprobe::report::LibraryInfo nvml;
  nvml.reason = r.topology->nvml_reason;
  r.tool.libraries["nvml"] = nvml;
  auto findings = interprobe::analysis::derive_findings(r);
  const auto* f = find(findings, "gpu.driver_missing");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("NVML could not load"), std::string::npos) << f->title;
  EXPECT_EQ(find(findings, "libraries.nvml_missing"), nullptr);
  r.topology->nvml_source = interprobe::report::NvmlSource::live;
  EXPECT_EQ(find(interprobe::analysis::derive_findings(r), "gpu.driver_missing"), nullptr);
  Report replay = inventory_with_gpu_drivers({"nvidia"});  // --root without a recording: not this machine's NVML
  EXPECT_EQ(find(interprobe::analysis::derive_findings(replay), "gpu.driver_missing"), nullptr);
}
