#include "probes/gpu/cuda_driver.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "common/dynlib.hpp"
#include "common/errors.hpp"

namespace interprobe::cu {

namespace {

// How the entry points are found: cuGetProcAddress_v2 (the CUDA 12.0 ABI: cuda.h from 12.0 on maps
// cuGetProcAddress to it), the older cuGetProcAddress (same arguments but for the symbol status),
// or dlsym of the CUDA 12.0 ABI names.
class Resolver {
 public:
  explicit Resolver(const DynamicLibrary& dl) : dl_(dl) {
    v2_ = dl.symbol<GetProcAddressV2Fn>("cuGetProcAddress_v2");
    if (!v2_) v1_ = dl.symbol<GetProcAddressFn>("cuGetProcAddress");
  }
  const char* how() const { return v2_ ? "cuGetProcAddress_v2" : (v1_ ? "cuGetProcAddress" : "dlsym"); }

  void* find(const char* name, const char* abi_name) const {
    void* fn = nullptr;
    if (v2_) {
      int status = kProcAddressSuccess;
      if (v2_(name, &fn, kAbiVersion, kGetProcAddressLegacyStream, &status) != kSuccess || status != kProcAddressSuccess)
        fn = nullptr;
    } else if (v1_) {
      if (v1_(name, &fn, kAbiVersion, kGetProcAddressLegacyStream) != kSuccess) fn = nullptr;
    }
    return fn ? fn : dl_.raw_symbol(abi_name);
  }

 private:
  const DynamicLibrary& dl_;
  GetProcAddressV2Fn* v2_ = nullptr;
  GetProcAddressFn* v1_ = nullptr;
};

const char* error_name_fallback(Result rc) {
  switch (rc) {
    case kErrorNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
    case kErrorNoDevice: return "CUDA_ERROR_NO_DEVICE";
    default: return "CUDA error";
  }
}

Driver load_from(std::unique_ptr<DynamicLibrary> dl) {
  Driver d;
  d.path = dl->path();
  // The simulator (tests/sim/cuda) exports this marker, so a simulated run never passes for a real one.
  if (auto marker = dl->symbol<const char*()>("interprobe_sim_version")) d.simulated = marker();
  d.driver_get_version = dl->symbol<DriverGetVersionFn>("cuDriverGetVersion");
  if (!d.driver_get_version)
    throw UnsupportedError(fmt::format("{} is not a CUDA driver library (no cuDriverGetVersion); {}", d.path,
                                       spec_of(VendorLibrary::cuda_driver).install_hint));
  if (Result rc = d.driver_get_version(&d.version); rc != kSuccess)
    throw UnsupportedError(fmt::format("cuDriverGetVersion failed ({}) in {}", rc, d.path));
  if (d.version < kMinimumDriverVersion)
    throw UnsupportedError(fmt::format(
        "the CUDA driver supports CUDA {} (cuDriverGetVersion {}); interprobe needs {} or newer: update the NVIDIA "
        "driver, or point --cuda-lib / INTERPROBE_CUDA_LIB at a newer libcuda.so.1",
        cuda_version_text(d.version), d.version, minimum_driver_text()));
  Resolver resolver(*dl);
  d.resolved_by = resolver.how();
  std::string missing;
#define INTERPROBE_CUDA_RESOLVE(member, type, name, abi_name)                        \
  d.member = reinterpret_cast<type*>(resolver.find(name, abi_name));                 \
  if (!d.member) missing += (missing.empty() ? "" : ", ") + std::string(name);
  INTERPROBE_CUDA_DRIVER_ENTRY_POINTS(INTERPROBE_CUDA_RESOLVE)
#undef INTERPROBE_CUDA_RESOLVE
#define INTERPROBE_CUDA_RESOLVE_OPTIONAL(member, type, name, abi_name) \
  d.member = reinterpret_cast<type*>(resolver.find(name, abi_name));
  INTERPROBE_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(INTERPROBE_CUDA_RESOLVE_OPTIONAL)
#undef INTERPROBE_CUDA_RESOLVE_OPTIONAL
  if (!missing.empty())
    throw UnsupportedError(fmt::format("the CUDA driver {} (CUDA {}) lacks entry points interprobe needs: {}", d.path,
                                       cuda_version_text(d.version), missing));
  if (Result rc = d.init(0); rc != kSuccess)
    throw UnsupportedError(fmt::format("no usable CUDA device: cuInit: {}; check `nvidia-smi` (driver loaded, kernel "
                                       "module of the same version, /dev/nvidia* visible in a container)",
                                       d.describe(rc)));
  dl.release();  // never unloaded, see driver()
  return d;
}

}  // namespace

std::string Driver::describe(Result rc) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (get_error_name) get_error_name(rc, &name);
  if (get_error_string) get_error_string(rc, &text);
  return fmt::format("{} ({}){}{}", name ? name : error_name_fallback(rc), rc, text ? ": " : "", text ? text : "");
}

std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }

std::string minimum_driver_text() {
  return fmt::format("CUDA {} (driver {})", cuda_version_text(kMinimumDriverVersion), kMinimumDriverBranch);
}

Driver load_driver(const std::string& path) {
  std::string error;
  auto dl = DynamicLibrary::open_path(path, &error);
  if (!dl) throw UnsupportedError(fmt::format("cannot load the CUDA driver {}: {}", path, error));
  return load_from(std::move(dl));
}

const Driver& driver() { return load_once<Driver, UnsupportedError>(VendorLibrary::cuda_driver, "no CUDA driver", load_from); }

namespace {

// The kernel names of a PTX text: each ".entry NAME(" or ".entry NAME()".
std::vector<std::string> ptx_entry_names(std::string_view ptx) {
  std::vector<std::string> names;
  constexpr std::string_view kEntry = ".entry ";
  for (auto at = ptx.find(kEntry); at != std::string_view::npos; at = ptx.find(kEntry, at + 1)) {
    auto begin = at + kEntry.size();
    auto end = ptx.find_first_of("( \t\n", begin);
    if (end != std::string_view::npos && end > begin) names.emplace_back(ptx.substr(begin, end - begin));
  }
  return names;
}

}  // namespace

Function module_function(const char* ptx, int device, const char* name, const char* what) {
  static std::mutex m;
  static std::map<std::tuple<const char*, int, std::string>, Function> functions;
  static std::map<std::pair<const char*, int>, Module> modules;
  std::lock_guard lock(m);
  auto key = std::make_tuple(ptx, device, std::string(name));
  if (auto it = functions.find(key); it != functions.end()) return it->second;
  const auto& d = driver();
  auto module = modules.find({ptx, device});
  if (module == modules.end()) {
    Module loaded = nullptr;
    check(d.module_load_data(&loaded, ptx), fmt::format("cuModuleLoadData ({})", what).c_str());
    module = modules.emplace(std::make_pair(ptx, device), loaded).first;
    // Every kernel of the module now, while nothing of ours runs: with lazy loading (the default
    // from CUDA 12.2) cuModuleGetFunction loads a kernel and may wait for the context's running
    // kernels, so a first copy kernel behind the spinning hold kernel would wait out its timeout.
    // nvbandwidth preloads its kernels for the same reason.
    for (const std::string& entry : ptx_entry_names(ptx)) {
      Function f = nullptr;
      check(d.module_get_function(&f, loaded, entry.c_str()), "cuModuleGetFunction");
      functions[std::make_tuple(ptx, device, entry)] = f;
    }
    if (auto it = functions.find(key); it != functions.end()) return it->second;
  }
  Function f = nullptr;
  check(d.module_get_function(&f, module->second, name), "cuModuleGetFunction");
  functions[key] = f;
  return f;
}

void check(Result rc, const char* call) {
  if (rc == kSuccess) return;
  std::string text = fmt::format("CUDA error {}", rc);
  try {
    text = driver().describe(rc);
  } catch (const UnsupportedError&) {
    // no driver to ask: the number alone
  }
  throw VendorError(call, rc, text);
}

}  // namespace interprobe::cu
