// The fleet report reader (`interprobe check --policy P FLEET.json` reads one from a file): any
// bytes parse, are not a fleet report (nullopt), or throw InputError; a fleet report that parsed
// is written back as JSON that reads back to the same JSON, and its text and markdown views hold
// no byte that can drive a terminal.
#include <string>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "report/fleet/fleet.hpp"
#include "report/render/renderers.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace interprobe;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<fleet::FleetReport> parsed;
  try {
    parsed = fleet::parse_fleet_text(text, "fuzz.json");
  } catch (const InputError&) {
    return 0;
  }
  if (!parsed) return 0;
  // An InputError from here on is a finding too: we wrote something we cannot read.
  const std::string written = fleet::fleet_to_json(*parsed).dump();
  auto reread = fleet::parse_fleet_text(written, "rewritten.json");
  fuzz::fuzz_require(reread.has_value(), "a fleet report's own JSON reads back as a fleet report");
  fuzz::fuzz_require(fleet::fleet_to_json(*reread).dump() == written, "a fleet report read back from its own JSON writes the same JSON");
  const render::TextStyle plain{false};
  const render::Document doc = fleet::fleet_document(*parsed);
  fuzz::fuzz_require(fuzz::terminal_safe(render::render_text(doc, plain)), "the text view of a fleet report holds no terminal control characters");
  fuzz::fuzz_require(fuzz::terminal_safe(render::render_markdown(doc)), "the markdown view of a fleet report holds no terminal control characters");
  return 0;
}
