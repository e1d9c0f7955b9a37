// Snapshot archives (`--root X.tar.gz`): any bytes are extracted or refused with InputError, and
// whatever is extracted stays inside the destination: nothing appears beside it, and every
// symlink in it resolves inside it (archive.hpp: "no links leaving the tree").
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/errors.hpp"
#include "probes/snapshot/archive.hpp"
#include "support/temp_tree.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

namespace fs = std::filesystem;

bool inside(const fs::path& path, const fs::path& dir) {
  auto rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

void check_contained(const fs::path& sandbox, const fs::path& dest) {
  for (const auto& entry : fs::directory_iterator(sandbox)) {
    auto name = entry.path().filename();
    interprobe::fuzz::fuzz_require(name == "input" || name == "out" || name == "canary",
                                   "extraction created nothing beside its destination");
  }
  interprobe::fuzz::fuzz_require(fs::is_empty(sandbox / "canary"), "extraction wrote nothing into a sibling directory");
  const fs::path real_dest = fs::canonical(dest);
  for (auto it = fs::recursive_directory_iterator(dest); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_symlink()) continue;
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(it->path(), ec);
    if (ec) continue;  // a loop: nothing is reached through it
    interprobe::fuzz::fuzz_require(resolved == real_dest || inside(resolved, real_dest),
                                   "every extracted symlink resolves inside the destination");
  }
}

// A mutated tar header almost never keeps its checksum, and libarchive refuses such a header
// before our checks see it: recompute the checksum of every block with the ustar magic.
void fix_tar_checksums(std::string& bytes) {
  for (std::size_t at = 0; at + 512 <= bytes.size(); at += 512) {
    if (bytes.compare(at + 257, 5, "ustar") != 0) continue;
    std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(at + 148), 8, ' ');
    unsigned sum = 0;
    for (std::size_t i = 0; i < 512; ++i) sum += static_cast<unsigned char>(bytes[at + i]);
    std::snprintf(&bytes[at + 148], 8, "%06o", sum & 0777777);  // "NNNNNN\0 "
    bytes[at + 155] = ' ';
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const interprobe::testing::TempTree sandbox;
  const fs::path input = sandbox.path() / "input", dest = sandbox.path() / "out";
  fs::remove_all(dest);
  fs::create_directories(dest);
  fs::create_directories(sandbox.path() / "canary");
  std::string bytes(reinterpret_cast<const char*>(data), size);
  fix_tar_checksums(bytes);
  std::ofstream(input, std::ios::binary | std::ios::trunc) << bytes;
  // Small limits keep each run fast; the checks they guard are the same at any size.
  interprobe::snapshot::ArchiveLimits limits;
  limits.max_entries = 256;
  limits.max_total_bytes = 1 << 20;
  try {
    interprobe::snapshot::extract_archive(input, dest, limits);
  } catch (const interprobe::InputError&) {
  }
  check_contained(sandbox.path(), dest);
  return 0;
}
