// Vendor library versions without loading the library (issue 12): the loader's search by hand,
// /etc/ld.so.cache, DT_SONAME, the version in a file name, and what the header then lists.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "common/dynlib.hpp"
#include "probes/runtime/library_file.hpp"
#include "probes/runtime/vendor_versions.hpp"

using namespace interprobe;
namespace fs = std::filesystem;

namespace {

// A cache in glibc's format with the given (SONAME, path) entries.
std::string make_ld_cache(const std::vector<std::pair<std::string, std::string>>& entries, const std::string& prefix = "") {
  std::string strings;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  const std::size_t table = 48 + 24 * entries.size();
  for (const auto& [key, value] : entries) {
    auto k = static_cast<std::uint32_t>(table + strings.size());
    strings += key + '\0';
    auto v = static_cast<std::uint32_t>(table + strings.size());
    strings += value + '\0';
    offsets.emplace_back(k, v);
  }
  std::string header = "glibc-ld.so.cache1.1";
  header.resize(48, '\0');
  auto count = static_cast<std::uint32_t>(entries.size());
  std::memcpy(header.data() + 20, &count, 4);
  std::string out = prefix + header;
  for (const auto& [k, v] : offsets) {
    std::string entry(24, '\0');
    std::int32_t flags = 0x303;
    std::memcpy(entry.data(), &flags, 4);
    std::memcpy(entry.data() + 4, &k, 4);
    std::memcpy(entry.data() + 8, &v, 4);
    out += entry;
  }
  return out + strings;
}

// A real shared object (this machine's libz) copied under another name.
fs::path copy_of_a_shared_library(const fs::path& dir, const std::string& name) {
  auto libz = find_library_file("libz.so.1");
  EXPECT_TRUE(libz);
  fs::create_directories(dir);
  fs::copy_file(fs::canonical(*libz), dir / name, fs::copy_options::overwrite_existing);
  return dir / name;
}

}  // namespace

TEST(LibraryFile, VersionFromFileName) {
  EXPECT_EQ(version_from_file_name("/usr/lib/libnccl.so.2.28.9"), "2.28.9");
  EXPECT_EQ(version_from_file_name("libnvidia-ml.so.580.95.05"), "580.95.05");
  EXPECT_EQ(version_from_file_name("libcublasLt.so.13"), "13");
  EXPECT_EQ(version_from_file_name("libnccl.so"), std::nullopt);
  EXPECT_EQ(version_from_file_name("libfoo.so.2.bak"), std::nullopt);
}

TEST(LibraryFile, LdCacheLookupFindsEveryEntryOfTheSonameAfterAnOldFormatPrefix) {
  auto cache = make_ld_cache({{"libnccl.so.2", "/opt/a/libnccl.so.2"}, {"libz.so.1", "/lib/libz.so.1"},
                              {"libnccl.so.2", "/opt/b/libnccl.so.2"}},
                             std::string("ld.so-1.7.0") + std::string(16, '\0'));
  EXPECT_EQ(ld_cache_lookup(cache, "libnccl.so.2"), (std::vector<std::string>{"/opt/a/libnccl.so.2", "/opt/b/libnccl.so.2"}));
  EXPECT_TRUE(ld_cache_lookup(cache, "libcuda.so.1").empty());
  EXPECT_TRUE(ld_cache_lookup("not a cache", "libz.so.1").empty());
  EXPECT_TRUE(ld_cache_lookup(cache.substr(0, 40), "libz.so.1").empty());  // truncated: nothing, no crash
}

TEST(LibraryFile, SonameOfASystemLibraryAndNoneOfOtherFiles) {
  auto libc = find_library_file("libc.so.6");
  ASSERT_TRUE(libc);
  EXPECT_EQ(read_elf_soname(*libc), "libc.so.6");
  EXPECT_EQ(read_elf_soname("/etc/hostname"), std::nullopt);
  EXPECT_EQ(read_elf_soname("/nonexistent/libx.so.1"), std::nullopt);
  EXPECT_EQ(find_library_file("libinterprobe-no-such-library.so.7"), std::nullopt);
}

TEST(LibraryFile, LocatedLibraryTakesItsVersionFromTheFileNameOrSonameAndIsNotLoaded) {
  char tmpl[] = "/tmp/interprobe-libfile-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  auto versioned = copy_of_a_shared_library(dir, "libnccl.so.2.19.3");
  set_library_override(VendorLibrary::nccl, versioned.string());
  auto info = locate_vendor_library(VendorLibrary::nccl);
  EXPECT_TRUE(info.found);
  EXPECT_EQ(info.path, versioned.string());
  EXPECT_EQ(info.version, "2.19.3");
  EXPECT_EQ(info.version_source, report::VersionSource::file_name);
  EXPECT_EQ(loaded_library_path(VendorLibrary::nccl), std::nullopt);  // located, never mapped

  // Named like its SONAME (libz.so.1): only the major version is known, and said so.
  auto bare = copy_of_a_shared_library(dir, "libz.so.1");
  set_library_override(VendorLibrary::nccl, bare.string());
  info = locate_vendor_library(VendorLibrary::nccl);
  EXPECT_EQ(info.version, "1");
  EXPECT_EQ(info.version_source, report::VersionSource::soname);

  set_library_override(VendorLibrary::nccl, (dir / "missing.so.2").string());
  info = locate_vendor_library(VendorLibrary::nccl);
  EXPECT_FALSE(info.found);
  EXPECT_NE(info.reason.value_or("").find("--nccl-lib"), std::string::npos);
  set_library_override(VendorLibrary::nccl, "");
  fs::remove_all(dir);
}

TEST(LibraryFile, HeaderListsOnlyWhatAProbeOpenedWithTheLibrarysOwnAnswer) {
  char tmpl[] = "/tmp/interprobe-libopen-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  EXPECT_TRUE(opened_vendor_libraries().empty());  // nothing opened yet in this process
  // A probe fails to open NVML: the header says so, with the reason.
  set_library_override(VendorLibrary::nvml, (dir / "libnvidia-ml.so.1").string());
  std::string error;
  EXPECT_EQ(DynamicLibrary::open(VendorLibrary::nvml, &error), nullptr);
  auto opened = opened_vendor_libraries();
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_FALSE(opened["nvml"].found);
  EXPECT_EQ(opened["nvml"].reason, error);
  // Every library with --verbose; the others located, not loaded.
  auto all = all_vendor_libraries_info();
  for (const char* key : {"cuda", "nvml", "nccl", "cublaslt", "cudart"}) EXPECT_TRUE(all.count(key)) << key;
  EXPECT_EQ(loaded_library_path(VendorLibrary::cublaslt), std::nullopt);
  set_library_override(VendorLibrary::nvml, "");
  fs::remove_all(dir);
}
