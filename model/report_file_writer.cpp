#include "model/report_file_writer.hpp"

#include <unistd.h>

#include "common/output_file.hpp"
#include "model/json.hpp"

namespace interprobe::report {

namespace fs = std::filesystem;

fs::path partial_report_path(const fs::path& path) {
  constexpr std::string_view kSuffix = ".partial";
  auto dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  std::size_t limit = name_max > 0 ? static_cast<std::size_t>(name_max) : 255;
  std::string name = path.filename().string();
  if (name.size() + kSuffix.size() > limit) name.resize(limit - kSuffix.size());
  return path.parent_path() / (name + std::string(kSuffix));
}

void write_report_file(const fs::path& path, const Report& report) {
  write_output_file(path, to_json_text(report), "-o", ExistingOutput::replace_regular);
}

}  // namespace interprobe::report
