#pragma once
// A hostile machine tree for end-to-end safety tests: a real fixture (PCI tree, CPUs, NUMA,
// DMI, cpuid.txt, cgroup) copied into a fresh sandbox, then planted with one family of attacks
// (or all of them), beside a canary directory that nothing may read or write, an output
// directory, and a private TMPDIR:
//
//   <outer>/box/trees/root     the tree given to --root
//   <outer>/box/trees/root.tar.gz  the same as an archive (build_archive)
//   <outer>/box/canary         files a following link would reach (dmi/, topology/, pcidev/...)
//   <outer>/box/out            where -o writes
//   <outer>/box/tmp            TMPDIR of the run (archives are extracted there)
//
// INTERPROBE_HOSTILE_KEEP=1 keeps the sandbox (its path goes to stderr) to replay a case.
//
// Every escaping link is aimed at the canary so that following it, on this host, opens a
// canary file: the test then knows that "nothing opened" means "nothing followed".
#include <filesystem>
#include <string>
#include <vector>

namespace interprobe::testing {

enum class HostileFamily {
  clean,           // no plants: the control, every run must exit 0
  absolute_links,  // sys/class/dmi/id -> /…/canary/dmi, cpu0/topology, a PCI device, proc/cpuinfo, cpuid.txt
  dotdot_links,    // links whose "../../.." climbs above the root into the canary
  lexical_links,   // x -> ., up -> x/.., up2 -> up/.. ...: lexically inside, escaping when followed
  fifos,           // FIFOs where files are read: product_name, numa_node, cpuid.txt, nvml.json, cpulist ...
  char_devices,    // /dev/zero and /dev/urandom nodes at proc/cpuinfo, proc/mounts, cpu/online, meminfo
  huge_files,      // 4 GiB sparse files (meminfo, cpu/online, product_name, config), 100,000-range cpulists
  numbers,         // numbers beyond every integer type: MemTotal, numa_node, link width, cpulists
  control_chars,   // ESC, OSC, BEL, C1 CSI (raw and UTF-8) in DMI strings, cpuinfo, cpuid.txt, names
  output_links,       // clean tree; the -o name is a symlink to a canary file
  output_temp_links,  // clean tree; symlinks to canary files at the predictable temp names beside -o
  // Archive only (the tree is clean), one kind of entry each:
  archive_absolute_paths,  // a file entry at /…/canary/escape-absolute
  archive_dotdot_paths,    // a file entry at ../../…/canary/escape-dotdot
  archive_link_writes,     // a link to the canary (absolute, '..'), then a file entry through it
  archive_lexical_writes,  // x -> ., up -> x/.., ..., then file entries through up12 and a link via it
  archive_hard_links,      // hard links to canary files, then a file entry over one
  all_in_one,      // every tree family at once (the last planted wins where paths collide)
};

const char* family_name(HostileFamily family);  // "AbsoluteLinks", ...
std::vector<HostileFamily> all_hostile_families();
// Whether a family means anything for a directory tree (the archive_* ones do not).
bool family_applies_to_tree(HostileFamily family);

class HostileSandbox {
 public:
  explicit HostileSandbox(HostileFamily family);
  ~HostileSandbox();
  HostileSandbox(const HostileSandbox&) = delete;
  HostileSandbox& operator=(const HostileSandbox&) = delete;

  const std::filesystem::path& outer() const { return outer_; }
  std::filesystem::path box() const { return outer_ / "box"; }
  std::filesystem::path root() const { return box() / "trees" / "root"; }
  std::filesystem::path archive() const { return box() / "trees" / "root.tar.gz"; }
  std::filesystem::path canary() const { return box() / "canary"; }
  std::filesystem::path out() const { return box() / "out"; }
  std::filesystem::path tmp() const { return box() / "tmp"; }

  // What was planted, one line each ("fifo sys/class/dmi/id/product_name"), for messages.
  const std::vector<std::string>& planted() const { return planted_; }
  // Tree paths that, opened on this host, reach into the canary (the positive control).
  const std::vector<std::filesystem::path>& escaping_links() const { return escaping_; }

  // Writes archive() (gzip'd pax tar through libarchive) from the tree, FIFOs, devices and
  // links as such, sparse files as sparse entries cut to 128 MiB (seven 4 GiB files would only
  // meet the archive's 1 GiB budget), plus the archive-only plants of the family.
  void build_archive();
  // Plants symlinks to canary files in out(): at `<name>` itself (output_links), at
  // `<name>.tmp.<pid>` and `.<name>.tmp.<pid>`, the predictable temp names (output_temp_links
  // and all_in_one); nothing for the other families.
  void plant_output_links(const std::string& output_name, int pid) const;
  // Where a planted output link points (canary files that must stay unchanged).
  std::filesystem::path output_victim() const { return canary() / "victim-output"; }

  struct ArchiveEntry {
    enum class Kind { file, symlink, hardlink, directory } kind;
    std::string path, target, content;
  };

 private:
  void make_canary();
  void copy_base_tree();
  void plant(HostileFamily family);
  void plant_links(HostileFamily family);
  void plant_special_files(HostileFamily family);
  void plant_numbers_and_strings(HostileFamily family);
  void plant_archive_escape(HostileFamily family);

  // Target strings for a link at tree path `link` that lands on canary/<what> when followed.
  std::string absolute_target(const std::string& what) const;
  std::string dotdot_target(const std::string& what) const;
  std::string lexical_target(const std::string& link, const std::string& what) const;

  // Replace the tree entry at `rel` (never through a link on the way).
  bool clear_for_plant(const std::string& rel);
  void plant_symlink(const std::string& rel, const std::string& target, bool escapes, const std::string& why);
  void plant_file(const std::string& rel, const std::string& content, const std::string& why);
  void plant_sparse(const std::string& rel, const std::string& prefix, unsigned long long size, const std::string& why);
  void plant_fifo(const std::string& rel);
  void plant_char_device(const std::string& rel, unsigned major, unsigned minor, const std::string& fallback);

  HostileFamily family_;
  std::filesystem::path outer_;
  std::vector<std::string> planted_;
  std::vector<std::filesystem::path> escaping_;
  std::vector<ArchiveEntry> archive_extras_;
};

// Writes `tree` and then `extras` as a gzip'd pax tar at `file`.
void write_hostile_archive(const std::filesystem::path& tree, const std::vector<HostileSandbox::ArchiveEntry>& extras,
                           const std::filesystem::path& file);

}  // namespace interprobe::testing
