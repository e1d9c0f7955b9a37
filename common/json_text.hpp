#pragma once
// JSON as interprobe writes it, to stdout and to files alike: machine strings are untrusted, so
// the text is pure ASCII (every control and non-ASCII character a \u escape, so `cat` or a
// terminal cannot be driven by it) and invalid UTF-8 becomes U+FFFD instead of throwing.
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace interprobe {

// Ends with a newline. indent < 0: one line.
std::string json_text(const nlohmann::json& document, int indent = 2);

}  // namespace interprobe
