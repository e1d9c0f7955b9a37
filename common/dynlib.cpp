#include "common/dynlib.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include <fmt/format.h>

namespace interprobe {

namespace {

std::mutex& override_mutex() {
  static std::mutex m;
  return m;
}
std::map<VendorLibrary, std::string>& overrides() {
  static std::map<VendorLibrary, std::string> m;
  return m;
}

const std::vector<VendorLibrarySpec>& specs() {
  static const std::vector<VendorLibrarySpec> all = {
      {VendorLibrary::cuda_driver, "cuda", "INTERPROBE_CUDA_LIB", {"libcuda.so.1", "libcuda.so"},
       "install the NVIDIA driver, or point INTERPROBE_CUDA_LIB / --cuda-lib at libcuda.so.1"},
      {VendorLibrary::nvml, "nvml", "INTERPROBE_NVML_LIB", {"libnvidia-ml.so.1", "libnvidia-ml.so"},
       "install the NVIDIA driver, or point INTERPROBE_NVML_LIB / --nvml-lib at libnvidia-ml.so.1"},
      {VendorLibrary::nccl, "nccl", "INTERPROBE_NCCL_LIB", {"libnccl.so.2", "libnccl.so"},
       "install NCCL (libnccl2, or pip nvidia-nccl-cu13), or point INTERPROBE_NCCL_LIB / --nccl-lib at libnccl.so.2"},
      {VendorLibrary::cublaslt, "cublaslt", "INTERPROBE_CUBLASLT_LIB",
       {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
       "install cuBLAS (CUDA toolkit, or pip nvidia-cublas), or point INTERPROBE_CUBLASLT_LIB / --cublaslt-lib at "
       "libcublasLt.so"},
  };
  return all;
}

std::map<VendorLibrary, LibraryOpenAttempt>& attempts() {
  static std::map<VendorLibrary, LibraryOpenAttempt> m;
  return m;
}

void record_attempt(VendorLibrary lib, const DynamicLibrary* opened, const std::string& error) {
  std::lock_guard lock(override_mutex());
  attempts()[lib] = LibraryOpenAttempt{lib, opened ? std::optional<std::string>(opened->path()) : std::nullopt, error};
}

// "libnvidia-ml.so" from "libnvidia-ml.so.1": what every file of that library starts with.
std::string stem_of(const std::string& name) {
  auto at = name.find(".so");
  return at == std::string::npos ? name : name.substr(0, at + 3);
}

}  // namespace

std::vector<LibraryOpenAttempt> library_open_attempts() {
  std::lock_guard lock(override_mutex());
  std::vector<LibraryOpenAttempt> out;
  for (const auto& [lib, attempt] : attempts()) out.push_back(attempt);
  return out;
}

std::optional<std::string> loaded_library_path(VendorLibrary lib) {
  struct Search {
    std::vector<std::string> stems;
    std::optional<std::string> forced;
    std::optional<std::string> found;
  } search;
  for (const auto& name : spec_of(lib).default_names) search.stems.push_back(stem_of(name));
  search.forced = library_override(lib);
  ::dl_iterate_phdr(
      [](struct dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        std::string path = info->dlpi_name;
        std::string base = path.substr(path.rfind('/') + 1);
        bool match = s->forced && path == *s->forced;
        for (const auto& stem : s->stems) match = match || base.rfind(stem, 0) == 0;
        if (!match) return 0;
        s->found = path;
        return 1;
      },
      &search);
  return search.found;
}

const VendorLibrarySpec& spec_of(VendorLibrary lib) {
  for (const auto& s : specs())
    if (s.id == lib) return s;
  return specs().front();
}

const std::vector<VendorLibrary>& all_vendor_libraries() {
  static const std::vector<VendorLibrary> ids = {VendorLibrary::cuda_driver, VendorLibrary::nvml,
                                                 VendorLibrary::nccl, VendorLibrary::cublaslt};
  return ids;
}

void set_library_override(VendorLibrary lib, std::string path) {
  std::lock_guard lock(override_mutex());
  overrides()[lib] = std::move(path);
}

std::optional<std::string> library_override(VendorLibrary lib) {
  {
    std::lock_guard lock(override_mutex());
    auto it = overrides().find(lib);
    if (it != overrides().end() && !it->second.empty()) return it->second;
  }
  if (const char* env = std::getenv(spec_of(lib).env_override); env && *env) return std::string(env);
  return std::nullopt;
}

DynamicLibrary::~DynamicLibrary() {
  // Vendor libraries register atexit handlers and threads; unloading them early crashes at exit.
}

std::unique_ptr<DynamicLibrary> DynamicLibrary::open_path(const std::string& path, std::string* error) {
  ::dlerror();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    if (error) *error = why ? why : ("cannot open " + path);
    return nullptr;
  }
  std::string resolved = path;
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) resolved = map->l_name;
  return std::unique_ptr<DynamicLibrary>(new DynamicLibrary(handle, resolved));
}

std::unique_ptr<DynamicLibrary> DynamicLibrary::already_loaded(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return nullptr;
  return std::unique_ptr<DynamicLibrary>(new DynamicLibrary(handle, path));
}

std::unique_ptr<DynamicLibrary> DynamicLibrary::open(VendorLibrary lib, std::string* error) {
  const auto& spec = spec_of(lib);
  std::string message;
  std::unique_ptr<DynamicLibrary> handle;
  if (auto forced = library_override(lib)) {
    std::string why;
    handle = open_path(*forced, &why);
    if (!handle) message = fmt::format("{} (given by --{}-lib or {}): {}", *forced, spec.key, spec.env_override, why);
  } else {
    std::string first_error;
    for (const auto& name : spec.default_names) {
      std::string why;
      if ((handle = open_path(name, &why))) break;
      // "cannot open shared object file" only repeats "not found"; keep anything more telling.
      if (first_error.empty() && why.find("cannot open shared object file") == std::string::npos) first_error = why;
    }
    if (!handle)
      message = first_error.empty() ? fmt::format("{} not found; {}", spec.default_names.front(), spec.install_hint)
                                    : fmt::format("{} not loadable ({}); {}", spec.default_names.front(), first_error, spec.install_hint);
  }
  record_attempt(lib, handle.get(), message);
  if (!handle && error) *error = message;
  return handle;
}

void* DynamicLibrary::raw_symbol(const char* name) const { return ::dlsym(handle_, name); }

}  // namespace interprobe
