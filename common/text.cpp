#include "common/text.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace interprobe {

std::string_view trim(std::string_view s) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0 || c == '\0'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string> split_whitespace(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  }
  return true;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parse_hex(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> kib_to_bytes(std::int64_t kib) {
  std::int64_t bytes = 0;
  if (kib < 0 || __builtin_mul_overflow(kib, std::int64_t{1024}, &bytes)) return std::nullopt;
  return bytes;
}

std::optional<std::int64_t> parse_kib_as_bytes(std::string_view text) {
  auto words = split_whitespace(text);
  if (words.empty()) return std::nullopt;
  auto kib = parse_int(words[0]);
  return kib ? kib_to_bytes(*kib) : std::nullopt;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return v;
}

std::optional<std::string> find_field(std::string_view text, std::string_view key, char sep) {
  for (const auto& line : split(text, '\n')) {
    auto pos = line.find(sep);
    if (pos == std::string::npos) continue;
    if (trim(std::string_view(line).substr(0, pos)) == key) {
      return std::string(trim(std::string_view(line).substr(pos + 1)));
    }
  }
  return std::nullopt;
}

}  // namespace interprobe

namespace interprobe {

namespace {

// Code points that change how the rest of the line is shown without being seen themselves.
bool is_invisible_format(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) ||      // C1 controls (CSI, OSC, ...)
         cp == 0x061c ||                    // Arabic letter mark
         (cp >= 0x200b && cp <= 0x200f) ||  // zero-width space/joiners, LRM, RLM
         (cp >= 0x2028 && cp <= 0x202e) ||  // line/paragraph separators, embeddings, overrides
         (cp >= 0x2060 && cp <= 0x206f) ||  // word joiner, invisible operators, isolates
         cp == 0xfeff ||                    // byte-order mark, zero-width no-break space
         (cp >= 0xfff9 && cp <= 0xfffb) ||  // interlinear annotation
         (cp >= 0xfdd0 && cp <= 0xfdef) ||  // noncharacters: not for interchange, and U+FFFE/U+FFFF
         (cp & 0xfffe) == 0xfffe ||         // are no XML 1.0 characters (a JUnit file holding one is no XML)
         (cp >= 0xe0000 && cp <= 0xe007f);  // tag characters
}

// Length of the valid UTF-8 sequence at s[i] (0 when invalid), its code point in `cp`.
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& cp) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char lead = byte(i);
  std::size_t len = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xc2 && lead <= 0xdf ? 2 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  cp = lead & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  const char32_t min_of_len[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_of_len[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;  // overlong, surrogate
  return len;
}

void escape_bytes(std::string_view bytes, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char c : bytes) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
}

}  // namespace

std::string printable(std::string_view raw, const PrintableOptions& options) {
  std::string out;
  out.reserve(raw.size());
  std::size_t shown = 0;
  std::size_t i = 0;
  while (i < raw.size()) {
    if (shown >= options.max_chars) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(raw[i]);
    std::size_t len = 1;
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (options.keep_newlines && (c == '\n' || c == '\t')) {
      out += static_cast<char>(c);
    } else if (c < 0x80 || options.ascii_only) {
      escape_bytes(raw.substr(i, 1), out);
    } else {
      char32_t cp = 0;
      len = utf8_sequence(raw, i, cp);
      if (len == 0) {
        len = 1;
        escape_bytes(raw.substr(i, 1), out);
      } else if (is_invisible_format(cp)) {
        escape_bytes(raw.substr(i, len), out);
      } else {
        out.append(raw.substr(i, len));
      }
    }
    i += len;
    ++shown;
  }
  return out;
}

}  // namespace interprobe
