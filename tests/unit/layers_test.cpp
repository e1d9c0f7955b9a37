// The layers of docs/architecture.md, held by the includes: each folder includes only itself and
// the folders below it (common <- model <- probes, report <- cli). A probe that included report/
// (to format, or to judge) or a model that included a probe fails here, naming the file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;

// Folder -> the project folders its sources may include ("interprobe/": the generated build config).
const std::map<std::string, std::set<std::string>> kAllowed{
    {"common", {"common", "interprobe"}},
    {"model", {"model", "common", "interprobe"}},
    {"probes", {"probes", "model", "common", "interprobe"}},
    {"report", {"report", "model", "common", "interprobe"}},
};

TEST(Layers, EachFolderIncludesOnlyItselfAndTheFoldersBelowIt) {
  const fs::path root = INTERPROBE_SOURCE_DIR;
  const std::regex include_line(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  std::size_t files = 0, includes = 0;
  for (const auto& [folder, allowed] : kAllowed) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include_line)) continue;
        ++includes;
        EXPECT_TRUE(allowed.count(m[1].str())) << fs::relative(entry.path(), root).string() << ":" << n << " includes "
                                               << m[1].str() << "/ (" << folder << "/ may include only the layers below it)";
      }
    }
  }
  EXPECT_GT(files, 200u);  // the scan found the tree
  EXPECT_GT(includes, 500u);
}

}  // namespace
