#include "probes/runtime/library_file.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/text.hpp"

namespace interprobe {

namespace {

constexpr unsigned char kElfClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
constexpr const char* kMultiarch = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
constexpr const char* kMultiarch = "aarch64-linux-gnu";
#elif defined(__powerpc64__)
constexpr int kMachine = EM_PPC64;
constexpr const char* kMultiarch = "powerpc64le-linux-gnu";
#else
constexpr int kMachine = -1;  // any: the loader would reject a wrong one, we only read a name
constexpr const char* kMultiarch = "";
#endif

class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~ReadOnlyFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  bool ok() const { return fd_ >= 0; }
  std::size_t read_some(void* buffer, std::size_t bytes, std::uint64_t offset) const {
    ssize_t got = ::pread(fd_, buffer, bytes, static_cast<off_t>(offset));
    return got > 0 ? static_cast<std::size_t>(got) : 0;
  }
  bool read_at(void* buffer, std::size_t bytes, std::uint64_t offset) const { return read_some(buffer, bytes, offset) == bytes; }

 private:
  int fd_;
};

// The ELF and program headers of a shared object for this machine, or nothing.
struct ElfImage {
  std::vector<ElfW(Phdr)> segments;

  std::optional<std::uint64_t> file_offset(ElfW(Addr) address) const {
    for (const auto& s : segments)
      if (s.p_type == PT_LOAD && address >= s.p_vaddr && address < s.p_vaddr + s.p_filesz) return s.p_offset + (address - s.p_vaddr);
    return std::nullopt;
  }
};

std::optional<ElfImage> read_elf_image(const ReadOnlyFile& file) {
  ElfW(Ehdr) header{};
  if (!file.read_at(&header, sizeof header, 0)) return std::nullopt;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != kElfClass) return std::nullopt;
  if (header.e_type != ET_DYN || (kMachine >= 0 && header.e_machine != kMachine)) return std::nullopt;
  if (header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phnum == 0 || header.e_phnum > 256) return std::nullopt;
  ElfImage image;
  image.segments.resize(header.e_phnum);
  if (!file.read_at(image.segments.data(), image.segments.size() * sizeof(ElfW(Phdr)), header.e_phoff)) return std::nullopt;
  return image;
}

bool is_shared_object_for_this_machine(const std::string& path) {
  ReadOnlyFile file(path);
  return file.ok() && read_elf_image(file).has_value();
}

std::string read_whole_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> default_directories() {
  std::vector<std::string> dirs;
  if (*kMultiarch) {
    dirs.push_back(std::string("/lib/") + kMultiarch);
    dirs.push_back(std::string("/usr/lib/") + kMultiarch);
  }
  for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) dirs.emplace_back(d);
  return dirs;
}

}  // namespace

std::vector<std::string> ld_cache_lookup(const std::string& cache, const std::string& name) {
  // glibc's format: a 48-byte header (magic, version, entry count, string table length, ...),
  // then 24-byte entries {int32 flags, uint32 key, uint32 value, uint32 osversion, uint64 hwcap}
  // whose key (the SONAME) and value (the path) are offsets from the header's start. An old
  // "ld.so-1.7.0" table may come first; the new header follows it.
  static constexpr std::string_view kMagic = "glibc-ld.so.cache1.1";
  constexpr std::size_t kHeaderBytes = 48, kEntryBytes = 24;
  std::vector<std::string> out;
  auto start = cache.find(kMagic);
  if (start == std::string::npos || cache.size() < start + kHeaderBytes) return out;
  auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    std::memcpy(&v, cache.data() + at, sizeof v);
    return v;
  };
  auto string_at = [&](std::uint32_t offset) -> std::optional<std::string_view> {
    std::size_t at = start + offset;
    if (at >= cache.size()) return std::nullopt;
    auto end = cache.find('\0', at);
    if (end == std::string::npos) return std::nullopt;
    return std::string_view(cache).substr(at, end - at);
  };
  std::uint32_t entries = u32(start + kMagic.size());
  for (std::uint32_t i = 0; i < entries; ++i) {
    std::size_t at = start + kHeaderBytes + static_cast<std::size_t>(i) * kEntryBytes;
    if (at + kEntryBytes > cache.size()) break;
    auto key = string_at(u32(at + 4));
    auto value = string_at(u32(at + 8));
    if (key && value && *key == name) out.emplace_back(*value);
  }
  return out;
}

std::optional<std::string> find_library_file(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return is_shared_object_for_this_machine(name) ? std::optional<std::string>(name) : std::nullopt;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("LD_LIBRARY_PATH"); env && *env)
    for (auto dir : split(env, ':'))
      if (!dir.empty()) candidates.push_back(std::string(dir) + "/" + name);
  for (auto& path : ld_cache_lookup(read_whole_file("/etc/ld.so.cache"), name)) candidates.push_back(std::move(path));
  for (const auto& dir : default_directories()) candidates.push_back(dir + "/" + name);
  for (const auto& path : candidates)
    if (is_shared_object_for_this_machine(path)) return path;
  return std::nullopt;
}

std::optional<std::string> read_elf_soname(const std::string& path) {
  ReadOnlyFile file(path);
  if (!file.ok()) return std::nullopt;
  auto image = read_elf_image(file);
  if (!image) return std::nullopt;
  for (const auto& segment : image->segments) {
    if (segment.p_type != PT_DYNAMIC) continue;
    std::vector<ElfW(Dyn)> entries(std::min<std::size_t>(segment.p_filesz / sizeof(ElfW(Dyn)), 4096));
    if (!file.read_at(entries.data(), entries.size() * sizeof(ElfW(Dyn)), segment.p_offset)) return std::nullopt;
    std::optional<ElfW(Addr)> strtab;
    std::optional<ElfW(Xword)> soname;
    for (const auto& e : entries) {
      if (e.d_tag == DT_NULL) break;
      if (e.d_tag == DT_STRTAB) strtab = e.d_un.d_ptr;
      if (e.d_tag == DT_SONAME) soname = e.d_un.d_val;
    }
    if (!strtab || !soname) return std::nullopt;
    auto offset = image->file_offset(*strtab + *soname);
    if (!offset) return std::nullopt;
    char text[256] = {};
    std::size_t got = file.read_some(text, sizeof text - 1, *offset);
    std::size_t length = strnlen(text, got);
    if (length == 0 || length == got) return std::nullopt;  // empty, or no NUL within 255 bytes
    return std::string(text, length);
  }
  return std::nullopt;
}

std::optional<std::string> version_from_file_name(const std::string& file_name) {
  auto base = file_name.substr(file_name.rfind('/') + 1);
  auto at = base.find(".so.");
  if (at == std::string::npos) return std::nullopt;
  auto version = base.substr(at + 4);
  if (version.empty() || version.find_first_not_of("0123456789.") != std::string::npos) return std::nullopt;
  return version;
}

}  // namespace interprobe
