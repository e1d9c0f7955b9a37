#include "common/errors.hpp"

#include <fmt/format.h>

namespace interprobe {

namespace {
std::string base_name(const char* path) {
  std::string s(path);
  auto slash = s.find_last_of('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}
}  // namespace

VendorError::VendorError(std::string call, long long code, std::string detail,
                         SourceLocation where)
    : std::runtime_error(fmt::format("{} failed with code {}{}{} ({}:{})", call, code,
                                     detail.empty() ? "" : ": ", detail,
                                     base_name(where.file_name()), where.line())),
      call_(std::move(call)),
      code_(code) {}

}  // namespace interprobe
