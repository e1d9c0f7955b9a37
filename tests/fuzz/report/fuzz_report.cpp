// The report reader and `interprobe report FILE`: any bytes parse or throw InputError; a report
// that parsed is written back as JSON that reads back to the same JSON, and renders as text and
// markdown in which no byte can drive a terminal.
#include <string>

#include "common/errors.hpp"
#include "model/json.hpp"
#include "report/render/renderers.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace interprobe;
  const std::string text(reinterpret_cast<const char*>(data), size);
  report::Report parsed;
  try {
    parsed = report::parse_report_text(text, "fuzz.json");
  } catch (const InputError&) {
    return 0;
  }
  // An InputError from here on is a finding too: we wrote something we cannot read.
  const std::string written = report::to_json_text(parsed);
  const std::string rewritten = report::to_json_text(report::parse_report_text(written, "rewritten.json"));
  fuzz::fuzz_require(written == rewritten, "a report read back from its own JSON writes the same JSON");
  const render::TextStyle plain{false};
  fuzz::fuzz_require(fuzz::terminal_safe(render::render(parsed, render::Format::text, plain, render::ViewOptions{true})),
                     "the text view of a report holds no terminal control characters");
  fuzz::fuzz_require(fuzz::terminal_safe(render::render(parsed, render::Format::markdown, plain)),
                     "the markdown view of a report holds no terminal control characters");
  return 0;
}
