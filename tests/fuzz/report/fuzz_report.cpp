// The report reader (`interprobe report FILE`, `compare`, `check`): any bytes parse or throw
// InputError; a report that parsed is written back as JSON that reads back to the same JSON.
#include <string>

#include "probes/common/errors.hpp"
#include "report/model/json.hpp"
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
  return 0;
}
