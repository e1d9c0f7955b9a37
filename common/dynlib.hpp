#pragma once
// Vendor libraries (NVML, NCCL, cuBLASLt, the CUDA driver) are opened at run time so the binary
// starts on a machine without them. Each has an override: the environment variable
// INTERPROBE_<NAME>_LIB or the CLI option --<name>-lib, so users can compare versions.
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace interprobe {

enum class VendorLibrary { cuda_driver, nvml, nccl, cublaslt };

struct VendorLibrarySpec {
  VendorLibrary id;
  const char* key;           // "nvml": report key and CLI option stem (--nvml-lib)
  const char* env_override;  // "INTERPROBE_NVML_LIB"
  std::vector<std::string> default_names;
  const char* install_hint;
};

const VendorLibrarySpec& spec_of(VendorLibrary lib);
const std::vector<VendorLibrary>& all_vendor_libraries();

// Set from the CLI; takes precedence over the environment variable.
void set_library_override(VendorLibrary lib, std::string path);
std::optional<std::string> library_override(VendorLibrary lib);

// What the probes of this process asked for, so the report header lists the libraries a
// measurement opened (and those it could not open, with the reason) and no others.
struct LibraryOpenAttempt {
  VendorLibrary lib;
  std::optional<std::string> path;  // the file loaded; nullopt when it failed
  std::string error;                // why it failed
};
std::vector<LibraryOpenAttempt> library_open_attempts();  // the last attempt per library
// The file of `lib` mapped into this process (opened by a probe, or by a library such as the
// statically linked CUDA runtime loading libcuda), found without loading anything.
std::optional<std::string> loaded_library_path(VendorLibrary lib);

class DynamicLibrary {
 public:
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // Opens the override or the first default name that loads; nullptr with `error` set otherwise.
  static std::unique_ptr<DynamicLibrary> open(VendorLibrary lib, std::string* error);
  static std::unique_ptr<DynamicLibrary> open_path(const std::string& path, std::string* error);
  // A handle on a library already loaded (RTLD_NOLOAD): nullptr when it is not, nothing is mapped.
  static std::unique_ptr<DynamicLibrary> already_loaded(const std::string& path);

  void* raw_symbol(const char* name) const;
  template <class Fn>
  Fn* symbol(const char* name) const {
    return reinterpret_cast<Fn*>(raw_symbol(name));
  }
  // The file actually loaded (resolved through the loader).
  const std::string& path() const { return path_; }

 private:
  DynamicLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

// A vendor library opened once per process and kept, success or failure: `load_from` turns the
// opened library into its API table (throwing Unsupported with the reason when it cannot), and a
// failure is remembered, so every later call throws the same reason without opening it again.
// `Unsupported` is the project's UnsupportedError (common/errors.hpp), passed in to keep this
// header free of it. One state per Api type.
template <class Api, class Unsupported, class LoadFrom>
const Api& load_once(VendorLibrary which, const char* absent_prefix, LoadFrom load_from) {
  static std::once_flag once;
  static std::variant<std::monostate, Api, std::string> state;
  std::call_once(once, [&] {
    std::string error;
    auto dl = DynamicLibrary::open(which, &error);
    if (!dl) {
      state = std::string(absent_prefix) + ": " + error;
      return;
    }
    try {
      state = load_from(std::move(dl));
    } catch (const Unsupported& e) {
      state = std::string(e.what());
    }
  });
  if (auto* reason = std::get_if<std::string>(&state)) throw Unsupported(*reason);
  return std::get<Api>(state);
}

}  // namespace interprobe
