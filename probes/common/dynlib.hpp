#pragma once
// Vendor libraries (NVML, NCCL, cuBLASLt, the CUDA driver) are opened at run time so the binary
// starts on a machine without them. Each has an override: the environment variable
// INTERPROBE_<NAME>_LIB or the CLI option --<name>-lib, so users can compare versions.
#include <memory>
#include <optional>
#include <string>
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

class DynamicLibrary {
 public:
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // Opens the override or the first default name that loads; nullptr with `error` set otherwise.
  static std::unique_ptr<DynamicLibrary> open(VendorLibrary lib, std::string* error);
  static std::unique_ptr<DynamicLibrary> open_path(const std::string& path, std::string* error);

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

}  // namespace interprobe
