#include "common/user_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/interrupt.hpp"

namespace interprobe {

std::string read_user_file(const std::filesystem::path& path, const UserFile& file) {
  // Non-blocking open: a FIFO without a writer must not hang here.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw InputError(fmt::format("{}: cannot open ({}); give {}", file.label, std::strerror(errno), file.kind));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  bool accepted = ::fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || (file.pipes_allowed && S_ISFIFO(st.st_mode)));
  if (!accepted)
    throw InputError(fmt::format("{}: not a regular file{}; give {}", file.label, file.pipes_allowed ? " or pipe" : "",
                                 file.kind));
  // Whole MiB where the limit is one (64 MiB), bytes otherwise (a test's 10-byte limit).
  std::string limit = file.max_bytes % (1u << 20) == 0 ? fmt::format("{} MiB", file.max_bytes >> 20)
                                                         : fmt::format("{} bytes", file.max_bytes);
  auto too_large = [&] {
    return InputError(fmt::format("{}: larger than {}, the most accepted; give {}", file.label, limit, file.kind));
  };
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > file.max_bytes) throw too_large();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a pipe's writer may still be writing
  std::string out;
  char buffer[65536];
  while (true) {
    throw_if_interrupted();
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("{}: read failed ({})", file.label, std::strerror(errno)));
    if (n == 0) return out;
    if (out.size() + static_cast<std::size_t>(n) > file.max_bytes) throw too_large();
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace interprobe
