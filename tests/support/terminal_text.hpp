#pragma once
// What must never reach a terminal from machine strings: C0 controls other than newline and
// tab (ESC starts CSI/OSC sequences, BEL ends OSC), DEL, C1 controls as UTF-8 (U+0080..U+009F,
// e.g. U+009B CSI) and as raw bytes 0x80..0x9F outside a valid UTF-8 sequence.
#include <string>
#include <vector>

namespace interprobe::testing {

// One line per hazard: byte offset, what it is, and the text around it (printable).
std::vector<std::string> terminal_hazards(const std::string& text);
// `text` with every control or non-ASCII byte as \xNN, safe to put in a test message.
std::string printable(const std::string& text);

}  // namespace interprobe::testing
