#include "report/render/text_layout.hpp"

#include <algorithm>
#include <numeric>

namespace interprobe::render {

namespace {

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Byte offset after the first `columns` code points of `s` (or its size).
std::size_t prefix_bytes(const std::string& s, std::size_t columns) {
  std::size_t at = 0;
  for (std::size_t seen = 0; at < s.size(); ++at) {
    if (continuation_byte(s[at])) continue;
    if (seen++ == columns) break;
  }
  return at;
}

}  // namespace

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (char c : s)
    if (!continuation_byte(c)) ++n;
  return n;
}

std::vector<std::string> wrap_words(const std::string& text, std::size_t width) {
  width = std::max<std::size_t>(width, 1);
  std::vector<std::string> lines;
  std::string line;
  std::size_t line_width = 0;
  auto flush = [&] {
    lines.push_back(line);
    line.clear();
    line_width = 0;
  };
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;  // runs of spaces collapse at line breaks
    std::size_t w = display_width(word);
    if (line_width > 0 && line_width + 1 + w > width) flush();
    while (w > width) {  // a word longer than the line: cut it, after a '/' or '_' when one is near
      std::size_t cut = prefix_bytes(word, width - line_width);
      std::size_t soft = word.find_last_of("/_.,:", cut - 1);
      if (soft != std::string::npos && soft + 1 >= cut / 2 && soft + 1 < cut) cut = soft + 1;
      line += word.substr(0, cut);
      word.erase(0, cut);
      w = display_width(word);
      flush();
    }
    if (word.empty()) continue;
    if (line_width > 0) {
      line += ' ';
      ++line_width;
    }
    line += word;
    line_width += w;
  }
  if (!line.empty() || lines.empty()) flush();
  return lines;
}

std::size_t longest_word(const std::string& text) {
  std::size_t longest = 0, at = 0;
  while (at <= text.size()) {
    std::size_t end = std::min(text.find(' ', at), text.size());
    longest = std::max(longest, display_width(text.substr(at, end - at)));
    at = end + 1;
  }
  return longest;
}

std::vector<std::size_t> fit_columns(const std::vector<std::size_t>& natural, const std::vector<std::size_t>& floor,
                                     std::size_t available) {
  std::vector<std::size_t> width = natural;
  std::size_t total = std::accumulate(width.begin(), width.end(), std::size_t{0});
  std::size_t floors = 0;
  for (std::size_t c = 0; c < width.size(); ++c) floors += std::min(natural[c], floor[c]);
  if (floors > available) return {};
  // Narrow the widest column that can still give, one column at a time: long prose columns
  // wrap first, short codes and numbers keep their width.
  while (total > available) {
    std::size_t widest = width.size();
    for (std::size_t c = 0; c < width.size(); ++c)
      if (width[c] > floor[c] && (widest == width.size() || width[c] > width[widest])) widest = c;
    if (widest == width.size()) return {};
    --width[widest];
    --total;
  }
  return width;
}

}  // namespace interprobe::render
