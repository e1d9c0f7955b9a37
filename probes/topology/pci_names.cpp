#include "probes/topology/pci_names.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "interprobe/build_config.hpp"
#include "probes/common/host_root.hpp"

#if INTERPROBE_HAVE_LIBPCI
extern "C" {
#include <pci/pci.h>
}
#endif

namespace interprobe {

#if INTERPROBE_HAVE_LIBPCI

namespace {

// libpci's default error handler calls exit(); ours unwinds back into the lookup instead.
struct PciLibraryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string format_message(const char* msg, va_list args) {
  char buffer[512];
  std::vsnprintf(buffer, sizeof buffer, msg, args);
  return buffer;
}

[[noreturn]] void on_pci_error(char* msg, ...) {
  va_list args;
  va_start(args, msg);
  std::string text = format_message(msg, args);
  va_end(args);
  throw PciLibraryError(text);
}

void on_pci_quiet(char*, ...) {}

std::string default_ids_path() {
  if (const char* env = std::getenv("INTERPROBE_PCI_IDS"); env && *env) return env;
  for (const char* p : {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids"}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p;
  }
  return {};
}

}  // namespace

struct PciNameDatabase::Impl {
  pci_access* access = nullptr;
  std::string ids_path, sysfs_path;
  ~Impl() {
    if (access) pci_cleanup(access);
  }
  std::optional<std::string> lookup(int flags, unsigned a, unsigned b) {
    char buffer[256];
    try {
      // NO_NUMBERS: unknown ids give NULL (our null), never a made-up "Device 1234".
      const char* name = pci_lookup_name(access, buffer, sizeof buffer, flags | PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB, a, b);
      if (!name || !*name) return std::nullopt;
      return std::string(name);
    } catch (const PciLibraryError&) {
      return std::nullopt;
    }
  }
};

PciNameDatabase::PciNameDatabase(const HostRoot& root) : impl_(std::make_unique<Impl>()) {
  impl_->ids_path = default_ids_path();
  if (impl_->ids_path.empty()) {
    unavailable_reason_ = "no pci.ids database (install pciutils or hwdata, or set INTERPROBE_PCI_IDS)";
    return;
  }
  impl_->access = pci_alloc();
  if (!impl_->access) {
    unavailable_reason_ = "libpci: pci_alloc failed";
    return;
  }
  impl_->access->error = on_pci_error;
  impl_->access->warning = on_pci_quiet;
  impl_->access->debug = on_pci_quiet;
  impl_->sysfs_path = (root.root() / "sys").string();
  pci_set_param(impl_->access, const_cast<char*>("sysfs.path"), impl_->sysfs_path.data());
  pci_set_name_list_path(impl_->access, impl_->ids_path.data(), 0);
  try {
    if (!pci_load_name_list(impl_->access)) unavailable_reason_ = "libpci could not read " + impl_->ids_path;
  } catch (const PciLibraryError& e) {
    unavailable_reason_ = std::string("libpci: ") + e.what();
  }
  if (unavailable_reason_) {
    pci_cleanup(impl_->access);
    impl_->access = nullptr;
  }
}

PciNameDatabase::~PciNameDatabase() = default;

std::optional<std::string> PciNameDatabase::vendor_name(unsigned vendor_id) {
  if (!impl_->access) return std::nullopt;
  return impl_->lookup(PCI_LOOKUP_VENDOR, vendor_id, 0);
}

std::optional<std::string> PciNameDatabase::device_name(unsigned vendor_id, unsigned device_id) {
  if (!impl_->access) return std::nullopt;
  return impl_->lookup(PCI_LOOKUP_DEVICE, vendor_id, device_id);
}

#else  // libpci compiled out

struct PciNameDatabase::Impl {};

PciNameDatabase::PciNameDatabase(const HostRoot&)
    : unavailable_reason_("compiled out: libpci; rebuild with -DINTERPROBE_WITH_LIBPCI=ON for pci.ids names") {}
PciNameDatabase::~PciNameDatabase() = default;
std::optional<std::string> PciNameDatabase::vendor_name(unsigned) { return std::nullopt; }
std::optional<std::string> PciNameDatabase::device_name(unsigned, unsigned) { return std::nullopt; }

#endif

}  // namespace interprobe
