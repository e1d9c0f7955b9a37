#include "probes/runtime/vendor_versions.hpp"

#include <fmt/format.h>

#include "probes/common/nvml_api.hpp"

namespace interprobe {

namespace {

std::string dotted_cuda_version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string dotted_nccl_version(int v) {
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch; older ones major*1000 + minor*100 + patch.
  if (v >= 20900) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

void probe_version(VendorLibrary lib, const DynamicLibrary& dl, report::LibraryInfo& info) {
  switch (lib) {
    case VendorLibrary::cuda_driver: {
      auto get = dl.symbol<int(int*)>("cuDriverGetVersion");
      int v = 0;
      if (!get) {
        info.reason = "cuDriverGetVersion missing from the library";
      } else if (int rc = get(&v); rc != 0) {
        info.reason = fmt::format("cuDriverGetVersion failed with code {}", rc);
      } else {
        info.version = dotted_cuda_version(v);
      }
      break;
    }
    case VendorLibrary::nvml: {
      auto init = dl.symbol<nvml::InitV2Fn>("nvmlInit_v2");
      auto shutdown = dl.symbol<nvml::ShutdownFn>("nvmlShutdown");
      auto version = dl.symbol<nvml::SystemGetNvmlVersionFn>("nvmlSystemGetNVMLVersion");
      auto driver = dl.symbol<nvml::SystemGetDriverVersionFn>("nvmlSystemGetDriverVersion");
      auto err = dl.symbol<nvml::ErrorStringFn>("nvmlErrorString");
      if (!init || !shutdown || !version) {
        info.reason = "library lacks nvmlInit_v2/nvmlSystemGetNVMLVersion: not a usable NVML";
        break;
      }
      if (nvml::Return rc = init(); rc != nvml::kSuccess) {
        info.reason = fmt::format("nvmlInit_v2 failed: {} (code {}); is the NVIDIA kernel driver loaded?",
                                  err ? err(rc) : "error", rc);
        break;
      }
      char buffer[nvml::kSystemNvmlVersionBufferSize] = {};
      if (version(buffer, sizeof buffer) == nvml::kSuccess) info.version = std::string(buffer);
      char drv[nvml::kSystemDriverVersionBufferSize] = {};
      if (driver && driver(drv, sizeof drv) == nvml::kSuccess) info.driver_version = std::string(drv);
      shutdown();
      break;
    }
    case VendorLibrary::nccl: {
      auto get = dl.symbol<int(int*)>("ncclGetVersion");
      int v = 0;
      if (!get) {
        info.reason = "ncclGetVersion missing from the library";
      } else if (int rc = get(&v); rc != 0) {
        info.reason = fmt::format("ncclGetVersion failed with code {}", rc);
      } else {
        info.version = dotted_nccl_version(v);
      }
      break;
    }
    case VendorLibrary::cublaslt: {
      auto get = dl.symbol<std::size_t()>("cublasLtGetVersion");
      if (!get) {
        info.reason = "cublasLtGetVersion missing from the library";
      } else {
        std::size_t v = get();
        info.version = fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
      }
      break;
    }
  }
}

}  // namespace

report::LibraryInfo probe_vendor_library(VendorLibrary lib) {
  report::LibraryInfo info;
  std::string error;
  auto dl = DynamicLibrary::open(lib, &error);
  if (!dl) {
    info.found = false;
    info.reason = error;
    return info;
  }
  info.found = true;
  info.path = dl->path();
  probe_version(lib, *dl, info);
  return info;
}

std::map<std::string, report::LibraryInfo> probe_vendor_libraries() {
  std::map<std::string, report::LibraryInfo> out;
  for (auto lib : all_vendor_libraries()) out[spec_of(lib).key] = probe_vendor_library(lib);
  out["cudart"] = probe_cuda_runtime();
  return out;
}

}  // namespace interprobe
