#include "probes/runtime/vendor_versions.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "probes/gpu/cuda_driver.hpp"
#include "probes/runtime/library_file.hpp"
#include "probes/runtime/nccl_build.hpp"

namespace interprobe {

namespace {

std::string dotted_cuda_version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string dotted_nccl_version(int v) {
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch; older ones major*1000 + minor*100 + patch.
  if (v >= 20900) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

// The version the file on disk carries: its resolved name (libnccl.so.2.28.9), else its SONAME
// (libnccl.so.2: the major version only). The driver's libraries are named by the driver's
// version (libnvidia-ml.so.580.95.05), which is what an operator compares.
void describe_file(VendorLibrary lib, const std::string& path, report::LibraryInfo& info) {
  std::error_code ec;
  auto resolved = std::filesystem::canonical(path, ec);
  std::string file = ec ? path : resolved.string();
  auto soname = read_elf_soname(file);
  std::string base = file.substr(file.rfind('/') + 1);
  if (auto v = version_from_file_name(base); v && base != soname) {
    info.version = v;
    info.version_source = report::VersionSource::file_name;
    if (lib == VendorLibrary::nvml || lib == VendorLibrary::cuda_driver) info.driver_version = v;
  } else if (soname && version_from_file_name(*soname)) {
    info.version = version_from_file_name(*soname);
    info.version_source = report::VersionSource::soname;
  }
}

// The devices the loaded driver sees (a probe called cuInit already; calling it again is a no-op).
std::optional<int> driver_device_count(const DynamicLibrary& dl) {
  auto init = dl.symbol<int(unsigned)>("cuInit");
  auto count = dl.symbol<int(int*)>("cuDeviceGetCount");
  int n = 0;
  if (!init || !count || init(0) != 0 || count(&n) != 0) return std::nullopt;
  return n;
}

// Asks a library a probe has loaded already. NVML is left to its file name: its version call
// needs nvmlInit, a round trip through the kernel driver, for a header line.
void ask_loaded_library(VendorLibrary lib, const DynamicLibrary& dl, report::LibraryInfo& info) {
  // The simulated libraries of tests/sim export this marker: the report then says so.
  if (auto marker = dl.symbol<const char*()>("interprobe_sim_version")) info.simulated = marker();
  std::optional<std::string> version;
  switch (lib) {
    case VendorLibrary::cuda_driver:
      if (auto get = dl.symbol<int(int*)>("cuDriverGetVersion")) {
        int v = 0;
        if (get(&v) == 0) version = dotted_cuda_version(v);
        if (v > 0 && v < cu::kMinimumDriverVersion)
          info.reason = fmt::format("CUDA {} is older than {}, the minimum interprobe needs", dotted_cuda_version(v),
                                    cu::minimum_driver_text());
        else if (v > 0) info.device_count = driver_device_count(dl);
      }
      break;
    case VendorLibrary::nccl:
      if (auto get = dl.symbol<int(int*)>("ncclGetVersion")) {
        int v = 0;
        if (get(&v) == 0) version = dotted_nccl_version(v);
      }
      // The simulator builds its version string from its description at run time: it answers.
      if (auto sim_major = dl.symbol<int()>("interprobe_sim_nccl_cuda_major")) info.cuda_major = sim_major();
      else if (info.path) {
        if (auto major = nccl_cuda_major_of_file(*info.path)) info.cuda_major = *major;
      }
      break;
    case VendorLibrary::cublaslt:
      if (auto get = dl.symbol<std::size_t()>("cublasLtGetVersion")) {
        std::size_t v = get();
        version = fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
      }
      break;
    case VendorLibrary::nvml: break;
  }
  if (!version) return;
  info.version = version;
  info.version_source = report::VersionSource::library;
}

}  // namespace

std::map<std::string, report::LibraryInfo> opened_vendor_libraries() {
  std::map<std::string, report::LibraryInfo> out;
  auto attempts = library_open_attempts();
  for (auto lib : all_vendor_libraries()) {
    auto loaded = loaded_library_path(lib);
    auto attempt = std::find_if(attempts.begin(), attempts.end(), [&](const auto& a) { return a.lib == lib; });
    if (!loaded && attempt == attempts.end()) continue;
    report::LibraryInfo info;
    if (loaded) {
      info.found = true;
      info.path = *loaded;
      describe_file(lib, *loaded, info);
      if (auto dl = DynamicLibrary::already_loaded(*loaded)) ask_loaded_library(lib, *dl, info);
    } else {
      info.reason = attempt->error;
    }
    out[spec_of(lib).key] = std::move(info);
  }
  if (out.count(spec_of(VendorLibrary::cuda_driver).key) && out[spec_of(VendorLibrary::cuda_driver).key].found)
    out["cudart"] = probe_cuda_runtime();
  return out;
}

report::LibraryInfo locate_vendor_library(VendorLibrary lib) {
  const auto& spec = spec_of(lib);
  report::LibraryInfo info;
  auto forced = library_override(lib);
  std::optional<std::string> path;
  if (forced) {
    path = find_library_file(*forced);
  } else {
    for (const auto& name : spec.default_names)
      if ((path = find_library_file(name))) break;
  }
  if (!path) {
    info.reason = forced ? fmt::format("{} (given by --{}-lib or {}): not found, or not a shared library for this machine",
                                       *forced, spec.key, spec.env_override)
                         : fmt::format("{} not found; {}", spec.default_names.front(), spec.install_hint);
    return info;
  }
  info.found = true;
  info.path = *path;
  describe_file(lib, *path, info);
  return info;
}

std::map<std::string, report::LibraryInfo> all_vendor_libraries_info() {
  auto out = opened_vendor_libraries();
  for (auto lib : all_vendor_libraries())
    if (!out.count(spec_of(lib).key)) out[spec_of(lib).key] = locate_vendor_library(lib);
  if (!out.count("cudart")) out["cudart"] = probe_cuda_runtime();
  return out;
}

}  // namespace interprobe
