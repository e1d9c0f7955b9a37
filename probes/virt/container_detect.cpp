// Containers in systemd's order (detect_container in src/basic/virt.c), then virt-what's extra
// markers (/.dockerinit, /proc/self/cgroup paths, Linux-VServer's VxID) where systemd finds none.
// Every marker is read even after one decided, so the evidence (and confidence) is complete.
#include <unistd.h>

#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "common/host_root.hpp"
#include "common/text.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

struct Decision {
  std::string id;
  std::string family;
};

// The first non-empty line of a small file, or nullopt (absence is not worth a line).
std::optional<std::string> one_line(const HostRoot& root, std::string_view path) {
  auto text = root.read_text(path);
  if (!text || text->empty()) return std::nullopt;
  return sanitize(split(*text, '\n').front(), 60);
}

std::string translate(const std::string& name, const std::optional<std::string>& from_files) {
  if (name == "oci") return from_files.value_or("container-other");  // some images hard-code it
  return container_id_from_name(name);
}

// systemd's cgroup-namespace heuristic (running_in_cgroupns), on files the root can show.
std::optional<bool> cgroupns_heuristic(const HostRoot& root) {
  if (!root.link_target("/proc/self/ns/cgroup") && !root.exists("/proc/self/ns/cgroup")) return std::nullopt;
  if (root.exists("/sys/fs/cgroup/cgroup.controllers")) {  // cgroup v2 mounted at /sys/fs/cgroup
    if (!root.exists("/sys/fs/cgroup/cgroup.events")) return false;  // the root cgroup has none
    if (root.exists("/sys/fs/cgroup/cgroup.type")) return true;      // nor cgroup.type
    return !root.exists("/sys/kernel/cgroup/features");
  }
  if (!root.exists("/sys/fs/cgroup/systemd")) return false;
  return !root.exists("/sys/fs/cgroup/systemd/release_agent");  // only the root cgroup has it
}

// virt-what's reading of /proc/self/cgroup paths.
std::optional<std::string> container_from_cgroup(const std::string& text, std::string* line_out) {
  for (const auto& line : split(text, '\n')) {
    auto colon = line.find(':', line.find(':') + 1);
    if (colon == std::string::npos) continue;
    std::string path = line.substr(colon + 1);
    const char* id = nullptr;
    if (path.find("/docker/") != std::string::npos || path.find("/docker-") != std::string::npos) id = "docker";
    else if (path.find("/libpod-") != std::string::npos || path.find("/libpod_parent") != std::string::npos) id = "podman";
    else if (path.find("/lxc/") != std::string::npos || path.find("/lxc.payload") != std::string::npos) id = "lxc";
    else if (path.find("/kubepods") != std::string::npos) id = "container-other";
    if (id) {
      *line_out = sanitize(line, 100);
      return id;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string container_id_from_name(std::string_view name) {
  static const std::set<std::string, std::less<>> known = {"lxc", "lxc-libvirt", "systemd-nspawn", "docker",
                                                           "podman", "rkt", "wsl", "proot", "pouch"};
  auto it = known.find(name);
  return it != known.end() ? *it : "container-other";
}

namespace {

// Candidates in the order they are found (systemd's order; the first one wins), each with the
// family of evidence that named it; a vote counts toward the confidence.
struct Candidates {
  EvidenceLog& log;
  std::vector<Decision> order;
  void add(const std::string& id, const std::string& family, bool vote = true) {
    order.push_back({id, family});
    if (vote) log.container_vote(family, id);
  }
};

// The markers systemd's detect_container reads, in its order; the marker files come last
// ("oci" and systemd's last step both need them, so they are read first).
void systemd_markers(const HostRoot& root, const PlatformSignals& platform, const std::string& status_text,
                     Candidates& found) {
  EvidenceLog& log = found.log;
  std::optional<std::string> from_files;
  for (auto [path, id] : {std::pair{"/run/.containerenv", "podman"}, std::pair{"/.dockerenv", "docker"}}) {
    if (root.exists(path)) {
      log.add(path, "container_marker", "present", fmt::format("container {}", id));
      log.container_vote("container_marker", id);
      if (!from_files) from_files = id;
    }
  }
  if (root.exists("/proc/vz")) {
    bool host = root.exists("/proc/bc");
    log.add("/proc/vz", "openvz", host ? "present with /proc/bc" : "present without /proc/bc",
            host ? "nothing: an OpenVZ host" : "container openvz");
    if (!host) found.add("openvz", "openvz");
  }
  if (platform.osrelease && (platform.osrelease->find("Microsoft") != std::string::npos ||
                             platform.osrelease->find("WSL") != std::string::npos)) {
    log.add("/proc/sys/kernel/osrelease", "wsl", "'" + sanitize(*platform.osrelease, 80) + "'", "container wsl");
    found.add("wsl", "wsl");
  }
  if (auto tracer = find_field(status_text, "TracerPid", ':'); tracer && *tracer != "0") {
    if (auto pid = parse_int(*tracer); pid && *pid > 0) {
      auto comm = root.read_text(fmt::format("/proc/{}/comm", *pid));
      if (comm && comm->rfind("proot", 0) == 0) {
        log.add("/proc/self/status TracerPid", "proot", fmt::format("{} ({})", *pid, sanitize(*comm, 20)), "container proot");
        found.add("proot", "proot");
      }
    }
  }
  if (auto manager = one_line(root, "/run/host/container-manager")) {
    std::string id = translate(*manager, from_files);
    log.add("/run/host/container-manager", "container_manager", "'" + *manager + "'", "container " + id);
    found.add(id, "container_manager");
  }
  // $container of our own process: authoritative only for PID 1 (systemd's rule), evidence otherwise.
  if (root.is_live()) {
    if (const char* env = std::getenv("container")) {
      std::string value = sanitize(env, 60);
      bool pid1 = ::getpid() == 1;
      std::string id = value.empty() ? "none" : translate(value, from_files);
      log.add("$container", "environment", "'" + value + "'",
              pid1 ? "container " + id + " (we are PID 1: authoritative)" : "hint: container " + id + " (not PID 1)");
      if (pid1) found.add(id, "environment", false);
    }
  }
  if (auto marker = one_line(root, "/run/systemd/container")) {
    std::string id = translate(*marker, from_files);
    log.add("/run/systemd/container", "container_manager", "'" + *marker + "'", "container " + id);
    found.add(id, "container_manager");
  }
  FileRead environ = root.read("/proc/1/environ", 1 << 20);
  if (environ.ok()) {
    for (const auto& entry : split(*environ.content, '\0')) {
      if (entry.rfind("container=", 0) != 0) continue;
      std::string value = sanitize(entry.substr(10), 60);
      std::string id = value.empty() ? "none" : translate(value, from_files);
      log.add("/proc/1/environ container=", "container_manager", "'" + value + "'", "container " + id);
      found.add(id, "container_manager", id != "none");
      break;
    }
  } else if (environ.failure == ReadFailure::permission_denied) {
    log.add("/proc/1/environ", "container_manager", kNeedsRoot, "nothing: PID 1's $container not checked (CAP_SYS_PTRACE)");
  }
  if (from_files) found.add(*from_files, "container_marker", false);  // voted for above
}

// Beyond systemd (virt-what): older markers, cgroup paths, Linux-VServer, cgroup namespaces.
void virt_what_markers(const HostRoot& root, const std::string& status_text, Candidates& found) {
  EvidenceLog& log = found.log;
  if (root.exists("/.dockerinit")) {
    log.add("/.dockerinit", "container_marker", "present", "container docker (old Docker marker; virt-what)");
    found.add("docker", "container_marker");
  }
  if (auto cgroup = root.read("/proc/self/cgroup", 64 * 1024); cgroup.ok()) {
    std::string line;
    if (auto id = container_from_cgroup(*cgroup.content, &line)) {
      log.add("/proc/self/cgroup", "cgroup", "'" + line + "'", "container " + *id + " (cgroup path; virt-what)");
      found.add(*id, "cgroup");
    }
  }
  if (auto vxid = find_field(status_text, "VxID", ':')) {
    auto n = parse_int(*vxid);
    bool guest = n && *n > 0;
    log.add("/proc/self/status VxID", "vserver", sanitize(*vxid, 20),
            guest ? "container container-other: a Linux-VServer guest" : "nothing: a Linux-VServer host");
    if (guest) found.add("container-other", "vserver");
  }
  if (auto ns = cgroupns_heuristic(root)) {
    log.add("cgroup namespace", "cgroupns", *ns ? "not the root cgroup" : "root cgroup",
            *ns ? "hint: container-other (systemd's cgroup namespace heuristic)" : "nothing");
    if (*ns) found.add("container-other", "cgroupns", false);
  }
}

}  // namespace

void detect_container(const HostRoot& root, const PlatformSignals& platform, EvidenceLog& log,
                      report::VirtSection& out) {
  std::string status_text;
  if (auto status = root.read("/proc/self/status", 64 * 1024); status.ok()) status_text = *status.content;
  Candidates found{log, {}};
  systemd_markers(root, platform, status_text, found);
  virt_what_markers(root, status_text, found);
  const auto& order = found.order;
  if (order.empty()) {
    out.container = "none";
    bool looked = root.exists("/proc/self/cgroup") || root.exists("/proc/1");
    log.add("container markers", "container_marker", "none of /.dockerenv /run/.containerenv /run/systemd/container "
            "/run/host/container-manager", "container none");
    out.container_confidence = looked ? report::Confidence::medium : report::Confidence::low;
    return;
  }
  out.container = order.front().id;
  std::set<std::string> agreeing;
  for (const auto& v : log.container_votes())
    if (v.says == out.container) agreeing.insert(v.family);
  using report::Confidence;
  if (out.container == "none")
    out.container_confidence = order.front().family == "environment" ? Confidence::high : Confidence::medium;
  else if (agreeing.size() >= 2) out.container_confidence = Confidence::high;
  else if (!agreeing.empty() || order.front().family == "environment") out.container_confidence = Confidence::medium;
  else out.container_confidence = Confidence::low;
}

}  // namespace interprobe::virt
