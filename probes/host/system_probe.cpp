#include "probes/host/system_probe.hpp"

#include <sys/utsname.h>

#include "common/host_root.hpp"
#include "common/text.hpp"

namespace interprobe {

namespace {

std::optional<std::string> unquote(std::optional<std::string> s) {
  if (s && s->size() >= 2 && (s->front() == '"' || s->front() == '\'') && s->back() == s->front())
    return s->substr(1, s->size() - 2);
  return s;
}

class SystemProbe final : public Probe {
 public:
  std::string name() const override { return "system"; }
  void run(const ProbeContext& ctx, report::Report& report) override { report.system = read_system(ctx.root); }
};

}  // namespace

report::SystemSection read_system(const HostRoot& root) {
  report::SystemSection s;
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    if (auto text = root.read(path); text.ok()) {
      s.os_name = unquote(find_field(*text.content, "PRETTY_NAME", '='));
      break;
    }
  }
  s.kernel = root.read_text("/proc/sys/kernel/osrelease");
  s.kernel_cmdline = root.read_text("/proc/cmdline");
  if (auto cpuinfo = root.read("/proc/cpuinfo"); cpuinfo.ok()) {
    s.cpu_vendor = find_field(*cpuinfo.content, "vendor_id", ':');
    s.cpu_model = find_field(*cpuinfo.content, "model name", ':');
    std::int64_t processors = 0;
    for (const auto& line : split(*cpuinfo.content, '\n'))
      if (starts_with_ci(line, "processor") && line.find(':') != std::string::npos) ++processors;
    if (processors > 0) s.logical_cpus = processors;
    // A replayed tree has no uname: infer the architecture from what cpuinfo lists.
    if (s.cpu_vendor) s.architecture = "x86_64";
    else if (find_field(*cpuinfo.content, "CPU implementer", ':')) s.architecture = "aarch64";
  }
  if (root.is_live()) {
    struct utsname names {};
    if (::uname(&names) == 0) s.architecture = std::string(names.machine);
  }
  if (auto meminfo = root.read("/proc/meminfo"); meminfo.ok()) {
    if (auto total = find_field(*meminfo.content, "MemTotal", ':')) s.memory_bytes = parse_kib_as_bytes(*total);
  }
  return s;
}

report::HostInfo read_host_identity(const HostRoot& root) {
  report::HostInfo h;
  h.hostname = root.read_text("/proc/sys/kernel/hostname");
  if (!h.hostname) h.hostname = root.read_text("/etc/hostname");
  h.kernel = root.read_text("/proc/sys/kernel/osrelease");
  h.root = root.root().string();
  h.live = root.is_live();
  return h;
}

std::unique_ptr<Probe> make_system_probe() { return std::make_unique<SystemProbe>(); }

}  // namespace interprobe
