#include "probes/runtime/nccl_build.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>

namespace interprobe {

std::optional<int> nccl_cuda_major_in(std::string_view bytes) {
  constexpr std::string_view kPrefix = "NCCL version ";
  for (auto at = bytes.find(kPrefix); at != std::string_view::npos; at = bytes.find(kPrefix, at + 1)) {
    // The version string is short and printable; the literal ends at its NUL.
    auto rest = bytes.substr(at + kPrefix.size(), 64);
    rest = rest.substr(0, rest.find('\0'));
    auto plus = rest.find("+cuda");
    if (plus == std::string_view::npos || plus == 0 || !std::isdigit(static_cast<unsigned char>(rest[0]))) continue;
    int major = 0;
    std::size_t i = plus + 5;
    for (; i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])) && major < 1000; ++i) major = major * 10 + (rest[i] - '0');
    if (i > plus + 5 && i < rest.size() && rest[i] == '.') return major;
  }
  return std::nullopt;
}

std::optional<int> nccl_cuda_major_of_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<int> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    auto size = static_cast<std::size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      ::madvise(map, size, MADV_SEQUENTIAL);
      out = nccl_cuda_major_in(std::string_view(static_cast<const char*>(map), size));
      ::munmap(map, size);
    }
  }
  ::close(fd);
  return out;
}

}  // namespace interprobe
