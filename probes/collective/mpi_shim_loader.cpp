// Loads interprobe-mpi.so (mpi_shim.hpp) once per process, when MPI is first needed.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "probes/collective/mpi_shim.hpp"
#include "common/errors.hpp"

namespace interprobe::collective {

namespace {

namespace fs = std::filesystem;

// Beside the executable (the build tree: build/cli/), then <prefix>/lib/interprobe (installed).
std::vector<fs::path> module_candidates() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  fs::path dir = exe.parent_path();
  return {dir / kMpiModuleFile, dir.parent_path() / "lib" / "interprobe" / kMpiModuleFile};
}

const interprobe_mpi_shim* load(std::string* why) {
  auto candidates = module_candidates();
  for (const auto& path : candidates) {
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    ::dlerror();
    // RTLD_GLOBAL: Open MPI's own plugins (MCA components) resolve libmpi's symbols globally.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      const char* error = ::dlerror();
      *why = fmt::format("cannot load the MPI backend {}: {}; install Open MPI (apt-get install openmpi-bin libopenmpi3)",
                         path.string(), error ? error : "dlopen failed");
      return nullptr;
    }
    auto entry = reinterpret_cast<const interprobe_mpi_shim* (*)()>(::dlsym(handle, kMpiShimSymbol));
    const interprobe_mpi_shim* shim = entry ? entry() : nullptr;
    if (!shim || shim->abi_version != kMpiShimAbi) {
      *why = fmt::format("{} is not the MPI backend of this interprobe (no {} of ABI {}); reinstall interprobe",
                         path.string(), kMpiShimSymbol, kMpiShimAbi);
      return nullptr;
    }
    return shim;
  }
  std::string looked;
  for (const auto& path : candidates) looked += (looked.empty() ? "" : ", ") + path.string();
  *why = fmt::format("the MPI backend {} is missing (looked at {}); reinstall interprobe with its lib/interprobe folder",
                     kMpiModuleFile, looked.empty() ? "nothing: /proc/self/exe unreadable" : looked);
  return nullptr;
}

}  // namespace

const interprobe_mpi_shim& mpi_shim() {
  static std::once_flag once;
  static const interprobe_mpi_shim* shim = nullptr;
  static std::string failure;
  std::call_once(once, [] { shim = load(&failure); });
  if (!shim) throw UnsupportedError(failure);
  return *shim;
}

}  // namespace interprobe::collective
