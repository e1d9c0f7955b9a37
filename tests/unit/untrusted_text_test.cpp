// Untrusted strings on every text path: one function (interprobe::printable) decides what may
// reach a terminal; the text and markdown renderers and the virt evidence go through it.
#include <gtest/gtest.h>

#include <string>

#include "common/text.hpp"
#include "report/render/renderers.hpp"

using namespace interprobe;
using interprobe::render::Format;
using interprobe::render::TextStyle;

namespace {

// Everything a terminal would act on or a reader could be fooled by.
const std::string kHostile = std::string("A\x1b[31mB") +  // ESC (CSI)
                             "\x9b" "31m" +                  // raw 8-bit CSI byte, not UTF-8
                             "\xc2\x9b" "2J" +               // U+009B CSI as UTF-8
                             "\xc2\x9d" "0;title\x07" +      // U+009D OSC as UTF-8, BEL
                             std::string("N\0L", 3) +        // NUL
                             "\xe2\x80\xae" "txt.exe" +      // U+202E right-to-left override
                             "\xe2\x81\xa6" "iso" +          // U+2066 left-to-right isolate
                             "\xff\xfe" "\xc0\xaf" +         // invalid UTF-8, overlong '/'
                             "\xed\xa0\x80" +                // UTF-16 surrogate in UTF-8
                             "\xe2\x80";                      // truncated sequence at the end

// No byte a terminal interprets, and nothing outside printable ASCII but well-formed text.
void expect_inert(const std::string& out) {
  for (unsigned char c : std::string_view(out)) {
    EXPECT_FALSE(c < 0x20 && c != '\n') << "control byte " << int(c) << " in: " << out;
    EXPECT_NE(c, 0x7f) << out;
    EXPECT_NE(c, 0x9b) << out;  // alone or as the second byte of U+009B
    EXPECT_NE(c, 0x9d) << out;
  }
  EXPECT_EQ(out.find("\xe2\x80\xae"), std::string::npos) << out;
  EXPECT_EQ(out.find("\xe2\x81\xa6"), std::string::npos) << out;
}

report::Report report_with(const std::string& text) {
  report::Report r;
  r.tool.version = "0.1.0";
  r.host.hostname = text;
  r.host.started_at = "2026-12-02T10:00:00Z";
  r.probes.push_back({"system", report::ProbeStatus::failed, text, 0.1});
  report::Finding f;
  f.id = "x";
  f.title = text;
  f.remedy = text;
  f.evidence = {{text, text}};
  r.findings.push_back(f);
  r.system = report::SystemSection{};
  r.system->cpu_model = text;
  return r;
}

}  // namespace

TEST(UntrustedText, EscapesControlsC1BidiAndInvalidUtf8) {
  std::string out = printable(kHostile);
  expect_inert(out);
  EXPECT_EQ(out,
            "A\\x1b[31mB\\x9b31m\\xc2\\x9b2J\\xc2\\x9d0;title\\x07N\\x00L\\xe2\\x80\\xaetxt.exe\\xe2\\x81\\xa6iso"
            "\\xff\\xfe\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x80");
}

TEST(UntrustedText, PrintableUtf8PassesUnchanged) {
  const std::string text = "Intel(R) Xeon(R) — Grüße 東京 \xf0\x9f\x96\xa5";
  EXPECT_EQ(printable(text), text);
  EXPECT_EQ(printable("a\tb\nc"), "a\\x09b\\x0ac");
  EXPECT_EQ(printable("a\tb\nc", {.keep_newlines = true}), "a\tb\nc");
}

TEST(UntrustedText, AsciiModeAndLengthCapForEvidence) {
  EXPECT_EQ(printable("Grüße", {.ascii_only = true}), "Gr\\xc3\\xbc\\xc3\\x9fe");
  EXPECT_EQ(printable("abcdef", {.max_chars = 3}), "abc...");
  EXPECT_EQ(printable("\x1b\x1b\x1b\x1b", {.max_chars = 2}), "\\x1b\\x1b...");
}

TEST(UntrustedText, TextReportShowsNoControlSequence) {
  for (bool colour : {false, true}) {
    std::string out = render::render(report_with(kHostile), Format::text, TextStyle{colour});
    if (colour) {
      // Our own colour codes are the only ESC: drop them, then nothing may be left.
      for (auto pos = out.find('\x1b'); pos != std::string::npos; pos = out.find('\x1b')) {
        auto end = out.find('m', pos);
        ASSERT_NE(end, std::string::npos);
        out.erase(pos, end - pos + 1);
      }
    }
    expect_inert(out);
    EXPECT_NE(out.find("A\\x1b[31mB\\x9b31m\\xc2\\x9b2J"), std::string::npos) << out;
  }
}

TEST(UntrustedText, MarkdownEscapesControlsAndMarkup) {
  std::string out = render::render(report_with(kHostile + "|`x`<script>*[l](u)# ~~s~~\nnext"), Format::markdown, TextStyle{});
  expect_inert(out);
  EXPECT_NE(out.find("A\\\\x1b\\[31mB\\\\x9b31m"), std::string::npos) << out;
  EXPECT_NE(out.find("\\|\\`x\\`&lt;script&gt;\\*\\[l\\](u)# \\~\\~s\\~\\~ next"), std::string::npos) << out;
  render::Document doc{"t", {render::Section{"s", {render::Paragraph{"# not a heading"}}}}};
  EXPECT_NE(render::render_markdown(doc).find("\n\\# not a heading\n"), std::string::npos) << render::render_markdown(doc);
  EXPECT_EQ(out.find("<script>"), std::string::npos);
}

TEST(UntrustedText, JsonOutputIsAscii) {
  std::string out = render::render(report_with(kHostile), Format::json, TextStyle{});
  for (unsigned char c : out) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(c);
  EXPECT_NE(out.find("\\u009b"), std::string::npos);
  EXPECT_NE(out.find("\\u202e"), std::string::npos);
}
