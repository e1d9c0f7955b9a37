// Text that fits the terminal: wrapping, column fitting, and every report of the repository
// rendered at several widths with no line past the width and no word lost.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "common/text.hpp"
#include "model/json.hpp"
#include "report/render/renderers.hpp"
#include "report/render/text_layout.hpp"
#include "support/run_binary.hpp"

using namespace interprobe;
using render::Document;
using render::display_width;
using render::Format;
using render::TextStyle;
using render::wrap_words;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string longest_line(const std::string& text) {
  std::string longest;
  for (const auto& line : lines_of(text))
    if (display_width(line) > display_width(longest)) longest = line;
  return longest;
}

// Every report the repository keeps: examples, the seed case, fixture reports.
std::vector<fs::path> repository_reports() {
  std::vector<fs::path> files = {fs::path(INTERPROBE_FIXTURES) / "seed-case/report.json"};
  for (const char* dir : {"/examples/reports", "/tests/fixtures/reports"})
    for (const auto& e : fs::directory_iterator(std::string(INTERPROBE_SOURCE_DIR) + dir))
      if (e.path().extension() == ".json") files.push_back(e.path());
  return files;
}

std::multiset<std::string> words_of(const std::string& text) {
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), '\n', ' ');
  std::multiset<std::string> words;
  for (auto& w : split_whitespace(spaced)) {
    if (w.size() > 1 && w.back() == ':') w.pop_back();  // a column name as a block's label
    words.insert(w);
  }
  return words;
}

}  // namespace

TEST(TextLayout, WrapBreaksAtSpacesAndCutsOnlyWordsLongerThanTheLine) {
  EXPECT_EQ(wrap_words("the quick brown fox", 10), (std::vector<std::string>{"the quick", "brown fox"}));
  EXPECT_EQ(wrap_words("abcdefghijkl xy", 5), (std::vector<std::string>{"abcde", "fghij", "kl xy"}));
  EXPECT_EQ(wrap_words("", 5), std::vector<std::string>{""});
  // Code points, not bytes: six "…" fill a six-column line.
  auto lines = wrap_words("…… ……", 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(display_width(lines[0]), 2u);
}

TEST(TextLayout, FitColumnsNarrowsTheWidestFirstAndGivesUpBelowTheFloors) {
  auto width = render::fit_columns({4, 40, 10}, {4, 8, 6}, 40);
  ASSERT_EQ(width.size(), 3u);
  EXPECT_EQ(width[0], 4u);
  EXPECT_EQ(width[0] + width[1] + width[2], 40u);
  EXPECT_EQ(width[2], 10u) << "the prose column gives first";
  EXPECT_TRUE(render::fit_columns({10, 10}, {10, 10}, 15).empty());
}

TEST(TextLayout, EveryRepositoryReportFitsEveryWidthAndKeepsItsWords) {
  for (const auto& file : repository_reports()) {
    auto report = report::read_report_file(file);
    const std::string wide = render::render(report, Format::text, TextStyle{false, 2000});
    for (std::size_t width : {60u, 80u, 100u, 140u}) {
      const std::string text = render::render(report, Format::text, TextStyle{false, width});
      EXPECT_LE(display_width(longest_line(text)), width) << file << " at " << width << ":\n" << longest_line(text);
      // Wrapping moves words between lines and a block layout adds column names: nothing goes.
      auto kept = words_of(text);
      for (const auto& w : words_of(wide))
        if (kept.count(w) == 0 && display_width(w) <= 20) ADD_FAILURE() << file << " at " << width << " lost '" << w << "'";
    }
  }
}

TEST(TextLayout, FindingsLeadWithSeverityAndTitleAndNameTheirId) {
  auto report = report::read_report_file(fs::path(INTERPROBE_FIXTURES) / "seed-case/report.json");
  ASSERT_FALSE(report.findings.empty());
  const auto text = render::render(report, Format::text, TextStyle{false, 80});
  const auto& f = report.findings.front();
  EXPECT_NE(text.find("id: " + f.id), std::string::npos) << text;
  // The verdict and the findings come before the detail sections.
  EXPECT_LT(text.find("\nfindings\n"), text.find("\nprobes\n"));
}

TEST(TextLayout, RunOnTheProxmoxFixtureFitsOneHundredColumns) {
  auto p = interprobe::testing::run_interprobe({"run", "--root", std::string(INTERPROBE_FIXTURES) + "/topology/proxmox-q35-8gpu-rootports", "-q"},
                                   {"COLUMNS=100"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_LE(display_width(longest_line(p.out)), 100u) << longest_line(p.out);
  auto narrow = interprobe::testing::run_interprobe({"topo", "--root", std::string(INTERPROBE_FIXTURES) + "/topology/hgx-h100-nvswitch", "-q"},
                                        {"COLUMNS=72"});
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  EXPECT_LE(display_width(longest_line(narrow.out)), 72u) << longest_line(narrow.out);
}
