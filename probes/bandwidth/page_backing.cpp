#include "probes/bandwidth/page_backing.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "common/unique_fd.hpp"

namespace interprobe {

namespace {

constexpr std::size_t kSmapsMaxBytes = 16u << 20;

std::optional<std::uint64_t> parse_hex(std::string_view text) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// "7f12a0000000-7f12e0000000 rw-p ..." -> its two addresses.
std::optional<std::pair<std::uint64_t, std::uint64_t>> entry_range(std::string_view line) {
  auto dash = line.find('-');
  auto space = line.find(' ');
  if (dash == std::string_view::npos || space == std::string_view::npos || dash > space) return std::nullopt;
  auto lo = parse_hex(line.substr(0, dash));
  auto hi = parse_hex(line.substr(dash + 1, space - dash - 1));
  if (!lo || !hi || *hi < *lo) return std::nullopt;
  return std::make_pair(*lo, *hi);
}

// The whole file: /proc files report size 0, so read until the end or the cap.
std::optional<std::string> read_own_proc_file(const char* path) {
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string text;
  char chunk[1 << 16];
  while (text.size() < kSmapsMaxBytes) {
    ssize_t got = ::read(fd.get(), chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;
    if (got == 0) break;
    text.append(chunk, static_cast<std::size_t>(got));
  }
  return text;
}

}  // namespace

PagePolicy parse_page_policy(std::string_view text) {
  if (text == "auto") return PagePolicy::automatic;
  if (text == "4k" || text == "4K") return PagePolicy::small;
  if (text == "2m" || text == "2M") return PagePolicy::huge;
  throw InputError(fmt::format("--pages '{}': use auto (the kernel's default), 4k (no huge pages) or 2m (transparent "
                               "huge pages where the kernel grants them)",
                               text));
}

void advise_pages(void* data, std::size_t bytes, PagePolicy policy) {
  if (!data || bytes == 0) return;
  // Best effort: with THP compiled out or "never" the advice is refused or ignored, and the
  // backing read afterwards says what the buffer really got.
  if (policy == PagePolicy::small) (void)::madvise(data, bytes, MADV_NOHUGEPAGE);
  else if (policy == PagePolicy::huge) (void)::madvise(data, bytes, MADV_HUGEPAGE);
}

std::optional<std::uint64_t> anon_huge_bytes(std::string_view smaps, std::uintptr_t begin, std::uintptr_t end) {
  bool inside = false, any = false;
  std::uint64_t total = 0;
  while (!smaps.empty()) {
    auto nl = smaps.find('\n');
    std::string_view line = smaps.substr(0, nl);
    smaps = nl == std::string_view::npos ? std::string_view{} : smaps.substr(nl + 1);
    if (auto range = entry_range(line)) {  // a new mapping's header line
      inside = range->first < end && begin < range->second;
      any = any || inside;
      continue;
    }
    if (!inside || !line.starts_with("AnonHugePages:")) continue;
    std::string_view value = trim(line.substr(14));
    std::uint64_t kib = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), kib);
    if (ec == std::errc() && trim(std::string_view(ptr, static_cast<std::size_t>(value.data() + value.size() - ptr))) == "kB")
      total += kib * 1024;
  }
  if (!any) return std::nullopt;
  return total;
}

std::optional<std::uint64_t> huge_page_bytes_of(const void* data, std::size_t bytes) {
  if (!data || bytes == 0) return std::nullopt;
  auto text = read_own_proc_file("/proc/self/smaps");
  if (!text) return std::nullopt;
  auto begin = reinterpret_cast<std::uintptr_t>(data);
  return anon_huge_bytes(*text, begin, begin + bytes);
}

std::optional<report::ThpMode> thp_mode_from(std::string_view enabled) {
  auto open = enabled.find('[');
  auto close = enabled.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1) return std::nullopt;
  return report::parse_enum<report::ThpMode>(enabled.substr(open + 1, close - open - 1));
}

}  // namespace interprobe
