// Renderers: same model, escaped untrusted strings, colour rules.
#include <gtest/gtest.h>

#include <cstdlib>

#include "report/render/document.hpp"
#include "report/render/renderers.hpp"

#include <fmt/format.h>

using namespace interprobe;
using interprobe::render::Cell;
using interprobe::render::color_wanted;
using interprobe::render::Document;
using interprobe::render::Format;
using interprobe::render::render_text;
using interprobe::render::Table;
using interprobe::render::TextStyle;


namespace {
report::Report hostile_report() {
  report::Report r;
  r.tool.version = "0.1.0";
  r.host.hostname = "evil\x1b]0;pwned\x07|`<b>`";
  r.host.started_at = "2026-12-02T10:00:00Z";
  r.system = report::SystemSection{};
  r.system->cpu_model = "CPU | with [link](http://x) and *stars*\nnewline";
  r.probes.push_back({"system", report::ProbeStatus::ok, std::nullopt, 0.1});
  return r;
}
}  // namespace

TEST(Render, TextEscapesTerminalControlCharacters) {
  std::string out = interprobe::render::render(hostile_report(), Format::text, TextStyle{false});
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\x07'), std::string::npos);
  EXPECT_NE(out.find("evil\\x1b]0;pwned\\x07"), std::string::npos);
  EXPECT_NE(out.find("system"), std::string::npos);
}

TEST(Render, ColourOnlyWhenAsked) {
  std::string plain = interprobe::render::render(hostile_report(), Format::text, TextStyle{false});
  std::string coloured = interprobe::render::render(hostile_report(), Format::text, TextStyle{true});
  EXPECT_EQ(plain.find("\x1b["), std::string::npos);
  EXPECT_NE(coloured.find("\x1b["), std::string::npos);
}

TEST(Render, NoColorEnvironmentWins) {
  ::unsetenv("NO_COLOR");
  EXPECT_TRUE(color_wanted(true, false));
  EXPECT_FALSE(color_wanted(false, false));
  EXPECT_FALSE(color_wanted(true, true));
  ::setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(color_wanted(true, false));
  ::unsetenv("NO_COLOR");
}

TEST(Render, MarkdownEscapesTableBreakers) {
  std::string md = interprobe::render::render(hostile_report(), Format::markdown, TextStyle{false});
  EXPECT_NE(md.find("CPU \\| with \\[link\\](http://x) and \\*stars\\* newline"), std::string::npos) << md;
  EXPECT_EQ(md.find("<b>"), std::string::npos);
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  EXPECT_NE(md.find("## system"), std::string::npos);
}

TEST(Render, JsonIsTheModel) {
  std::string json = interprobe::render::render(hostile_report(), Format::json, TextStyle{false});
  EXPECT_NE(json.find("\"schema_version\": \"2.6.0\""), std::string::npos);
  EXPECT_NE(json.find("\\u001b"), std::string::npos);  // escaped, not raw
}

TEST(Render, TableAlignsUtf8ByCodePoints) {
  Document doc;
  doc.sections.push_back({"t", {Table{"", {"a", "b"}, {}, {{Cell("µµ"), Cell("x")}, {Cell("ab"), Cell("y")}}}}});
  std::string out = render_text(doc, TextStyle{false});
  EXPECT_NE(out.find("µµ  x"), std::string::npos) << out;
  EXPECT_NE(out.find("ab  y"), std::string::npos) << out;
}

// Issue 36: a finding names its GPUs by index and model as well as address, and evidence that
// only repeats the affected list is not printed a second time.
TEST(Render, FindingsNameGpusByIndexAndModelWithoutRepeats) {
  report::Report r;
  r.topology.emplace();
  for (int i = 0; i < 2; ++i) {
    report::Gpu g;
    g.index = i + 2;
    g.bdf = fmt::format("0000:1{}:00.0", i);
    g.name = "NVIDIA H100 80GB HBM3";
    r.topology->gpus.push_back(g);
  }
  report::Finding f;
  f.id = "virt.vfio_without_iommu";
  f.severity = report::Severity::fail;
  f.title = "GPUs bound to vfio-pci but the IOMMU is off";
  f.affected = {"0000:10:00.0", "0000:11:00.0"};
  f.evidence = {{"vfio_pci_gpus", std::string("0000:10:00.0, 0000:11:00.0")}, {"iommu_groups", std::int64_t{0}}};
  r.findings.push_back(f);
  std::string text = render::render(r, Format::text, TextStyle{false, render::kUnlimitedWidth});
  EXPECT_NE(text.find("affected 2: GPU2 NVIDIA H100 80GB HBM3 (0000:10:00.0), GPU3 NVIDIA H100 80GB HBM3 (0000:11:00.0)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("vfio_pci_gpus"), std::string::npos) << text;
  EXPECT_NE(text.find("iommu_groups=0"), std::string::npos) << text;
}

// Issue 36: the checked P2P transfers as a GPU x GPU grid, nvbandwidth-style, direct vs staged marked.
TEST(Render, MeasuredP2pGridMarksDirectAndStaged) {
  report::Report r;
  r.bandwidth.emplace();
  auto pair = [](std::string src, std::string dst, report::P2pTruth truth, bool claimed) {
    report::P2pPairTruth p;
    p.src = std::move(src);
    p.dst = std::move(dst);
    p.truth = truth;
    p.peer_access_claimed = claimed;
    p.p2p_gbps = 52.5;
    p.staged_gbps = 11.5;
    return p;
  };
  r.bandwidth->p2p_pairs = {pair("gpu0", "gpu1", report::P2pTruth::p2p, true), pair("gpu1", "gpu0", report::P2pTruth::claimed_but_staged, true),
                            pair("gpu0", "gpu2", report::P2pTruth::staged, false), pair("gpu2", "gpu0", report::P2pTruth::corrupt, true)};
  std::string text = render::render(r, Format::text, TextStyle{false, render::kUnlimitedWidth});
  auto grid = text.find("measured GB/s per GPU pair");
  ASSERT_NE(grid, std::string::npos) << text;
  std::string rows = text.substr(grid, text.find("P2P per GPU pair, from measurements") - grid);
  EXPECT_NE(rows.find(" X"), std::string::npos) << rows;
  EXPECT_NE(rows.find("52.5 direct"), std::string::npos) << rows;
  EXPECT_NE(rows.find("11.5 staged (P2P claimed)"), std::string::npos) << rows;
  EXPECT_NE(rows.find("11.5 staged\n"), std::string::npos) << rows;  // staged, P2P not claimed (last column)
  EXPECT_NE(rows.find("corrupt"), std::string::npos) << rows;
  std::string html = render::render(r, Format::html, TextStyle{});
  EXPECT_NE(html.find("52.5 direct"), std::string::npos);
}

// A grouped finding lists its devices compactly in the findings table.
TEST(Render, AffectedDevicesAreSummarized) {
  using interprobe::render::affected_summary;
  EXPECT_EQ(affected_summary({}), "");
  EXPECT_EQ(affected_summary({"0000:01:00.0"}), "0000:01:00.0");
  EXPECT_EQ(affected_summary({"a", "b"}), "2: a, b");
  std::vector<std::string> eight;
  for (int i = 1; i <= 8; ++i) eight.push_back(fmt::format("0000:0{}:00.0", i));
  EXPECT_EQ(affected_summary(eight), "8: 0000:01:00.0 \u2026 0000:08:00.0");
}
