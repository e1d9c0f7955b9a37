#include "model/sections.hpp"

namespace interprobe::report {

std::vector<std::string> section_names(bool SectionInfo::*flag) {
  std::vector<std::string> out;
  for (const auto& s : kSections)
    if (s.*flag) out.emplace_back(s.name);
  return out;
}

std::vector<std::string> probe_names() {
  std::vector<std::string> out;
  for (const auto& s : kSections)
    if (!s.probe.empty()) out.emplace_back(s.probe);
  return out;
}

}  // namespace interprobe::report
