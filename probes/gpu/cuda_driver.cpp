#include "probes/gpu/cuda_driver.hpp"

#include <memory>
#include <mutex>
#include <variant>

#include <fmt/format.h>

#include "common/dynlib.hpp"
#include "common/errors.hpp"

namespace interprobe::cu {

namespace {

// How the entry points are found: cuGetProcAddress_v2 (12.5+), cuGetProcAddress (12.0-12.4:
// same arguments but for the symbol status), or dlsym of the CUDA 12.0 ABI names.
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

const Driver& driver() {
  static std::once_flag once;
  static std::variant<std::monostate, Driver, std::string> state;
  std::call_once(once, [] {
    std::string error;
    auto dl = DynamicLibrary::open(VendorLibrary::cuda_driver, &error);
    if (!dl) {
      state = fmt::format("no CUDA driver: {}", error);
      return;
    }
    try {
      state = load_from(std::move(dl));
    } catch (const UnsupportedError& e) {
      state = std::string(e.what());
    }
  });
  if (auto* reason = std::get_if<std::string>(&state)) throw UnsupportedError(*reason);
  return std::get<Driver>(state);
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
