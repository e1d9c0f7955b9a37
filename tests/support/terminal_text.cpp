#include "support/terminal_text.hpp"

#include <cstdio>

namespace interprobe::testing {

namespace {

// Length of the valid UTF-8 sequence at `i` and its code point; 0 when invalid.
std::size_t utf8_sequence(const std::string& s, std::size_t i, char32_t& cp) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  std::size_t n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b <= 0xdf ? 2 : 0;
  if (b >= 0xf5 || n == 0 || i + n > s.size()) return 0;
  cp = b & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  return n;
}

std::string hex(unsigned value) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%02X", value);
  return buffer;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\n') || c >= 0x7f) out += "\\x" + hex(c);
    else out += static_cast<char>(c);
  }
  return out;
}

std::vector<std::string> terminal_hazards(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    std::string what;
    std::size_t length = 1;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      what = c == 0x1b ? "ESC" : "control byte 0x" + hex(c);
    } else if (c >= 0x80) {
      char32_t cp = 0;
      length = utf8_sequence(text, i, cp);
      if (length == 0) {
        length = 1;
        if (c <= 0x9f) what = "raw C1 byte 0x" + hex(c);
      } else if (cp >= 0x80 && cp <= 0x9f) {
        what = "C1 control U+00" + hex(static_cast<unsigned>(cp));
      }
    }
    if (!what.empty()) {
      std::size_t from = i < 20 ? 0 : i - 20;
      out.push_back("offset " + std::to_string(i) + ": " + what + " in '" + printable(text.substr(from, 40)) + "'");
    }
    i += length;
  }
  return out;
}

}  // namespace interprobe::testing
