#include "probes/topology/pci_names.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "interprobe/build_config.hpp"
#include "common/host_root.hpp"

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

// GNU spelling: clang counts noreturn in the pointer type of pci_access::error, [[noreturn]] is not.
__attribute__((noreturn)) void on_pci_error(char* msg, ...) {
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

// The vendor sections of pci.ids for `vendors` (vendor line plus its indented device and
// subsystem lines), in pci.ids syntax; empty when the file cannot be read.
std::string vendor_sections(const std::string& path, const std::set<unsigned>& vendors) {
  // mmap: copying 1.3 MB through read() cost 18 ms of system time in a Firecracker guest, the
  // mapping 0.2 ms.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st {};
  void* mapped = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && st.st_size > 0)
    mapped = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) return {};
  std::string_view text(static_cast<const char*>(mapped), static_cast<std::size_t>(st.st_size));
  std::string out = "# vendor sections of " + path + " selected by interprobe\n";
  bool keep = false;
  const char* p = text.data();
  const char* const stop = p + text.size();
  while (p < stop) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(stop - p)));
    const char* end = nl ? nl + 1 : stop;
    if (*p == 'C' && end - p > 1 && p[1] == ' ') break;  // the class list follows the vendors
    if (*p != '\t' && *p != '#' && *p != '\n' && end - p > 6 && p[4] == ' ') {
      // A vendor line "10de  NVIDIA Corporation" starts a section; keep it when wanted.
      char id_text[5] = {p[0], p[1], p[2], p[3], 0};
      char* parsed_end = nullptr;
      unsigned long id = std::strtoul(id_text, &parsed_end, 16);
      keep = parsed_end == id_text + 4 && vendors.count(static_cast<unsigned>(id)) > 0;
    }
    if (keep && *p != '#') out.append(p, static_cast<std::size_t>(end - p));
    p = end;
  }
  ::munmap(mapped, static_cast<std::size_t>(st.st_size));
  if (out.back() != '\n') out += '\n';
  return out;
}

}  // namespace

struct PciNameDatabase::Impl {
  pci_access* access = nullptr;
  std::string ids_path, sysfs_path, memfd_path;
  int memfd = -1;
  ~Impl() {
    if (access) pci_cleanup(access);
    if (memfd >= 0) ::close(memfd);
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

PciNameDatabase::PciNameDatabase(const HostRoot& root, const std::set<unsigned>& vendors) : impl_(std::make_unique<Impl>()) {
  impl_->ids_path = default_ids_path();
  if (impl_->ids_path.empty()) {
    unavailable_reason_ = "no pci.ids database (install pciutils or hwdata, or set INTERPROBE_PCI_IDS)";
    return;
  }
  const std::string& full = impl_->ids_path;
  // A gzip-compressed pci.ids (pci.ids.gz) goes to libpci as it is.
  if (full.size() < 3 || full.compare(full.size() - 3, 3, ".gz") != 0) {
    std::string selected = vendor_sections(impl_->ids_path, vendors);
    impl_->memfd = selected.empty() ? -1 : ::memfd_create("interprobe-pci-ids", MFD_CLOEXEC);
    if (impl_->memfd >= 0 && ::write(impl_->memfd, selected.data(), selected.size()) == static_cast<ssize_t>(selected.size())) {
      impl_->memfd_path = fmt::format("/proc/self/fd/{}", impl_->memfd);
    }
  }
  impl_->access = pci_alloc();
  if (!impl_->access) {
    unavailable_reason_ = "libpci: pci_alloc failed";
    return;
  }
  impl_->access->error = on_pci_error;
  impl_->access->warning = on_pci_quiet;
  impl_->access->debug = on_pci_quiet;
  // No ~/.pciids-cache (its lookup reads /etc/passwd through NSS) and no network lookups.
  impl_->access->id_lookup_mode = 0;
  // Inert today: only pci_lookup_name is called, and without pci_init libpci opens no access
  // method, so it reads no sysfs at all (checked with strace on a --root tree). Set anyway so a
  // future scan cannot fall back to the live /sys; such a scan would first need
  // library_unsafe_reason(root) (common/tree_audit.hpp), like hwloc.
  impl_->sysfs_path = (root.root() / "sys").string();
  pci_set_param(impl_->access, const_cast<char*>("sysfs.path"), impl_->sysfs_path.data());
  if (!impl_->memfd_path.empty()) pci_set_name_list_path(impl_->access, impl_->memfd_path.data(), 0);
  else pci_set_name_list_path(impl_->access, impl_->ids_path.data(), 0);
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

PciNameDatabase::PciNameDatabase(const HostRoot&, const std::set<unsigned>&)
    : unavailable_reason_("compiled out: libpci; rebuild with -DINTERPROBE_WITH_LIBPCI=ON for pci.ids names") {}
PciNameDatabase::~PciNameDatabase() = default;
std::optional<std::string> PciNameDatabase::vendor_name(unsigned) { return std::nullopt; }
std::optional<std::string> PciNameDatabase::device_name(unsigned, unsigned) { return std::nullopt; }

#endif

}  // namespace interprobe
