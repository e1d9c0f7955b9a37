#pragma once
// JSON someone handed us (a report, fleet report, policy, model config, telemetry trace): parsed
// with one bound on nesting, checked before any tree is built. A document nested 100,000 deep
// would otherwise exhaust the stack in whatever walks it recursively (dump(), a destructor).
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace interprobe {

// Deeper than any file interprobe reads or writes (a report is about 8 deep).
inline constexpr int kMaxJsonDepth = 64;

// Too deep, or a value the parser cannot hold (1e999). The message starts with the key path
// where it broke ("findings[3].evidence.a: ..."); callers put the file's name in front.
class JsonInputError : public InputError {
 public:
  using InputError::InputError;
};

// Parses `text` into a tree no deeper than kMaxJsonDepth containers, in time linear in its size:
// a first pass over the parser's events (no tree) checks the depth, the second builds the tree.
// Throws JsonInputError (depth, out-of-range number) or nlohmann::json::parse_error (syntax).
nlohmann::json parse_json_bounded(const std::string& text);

// A value as error messages quote it: its JSON text cut to `max_chars` (then "..."), escaped
// for a terminal. A 300,000-element list is named by its first few elements, not in full.
std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars = 60);

}  // namespace interprobe
