#include <algorithm>

#include <fmt/format.h>

#include "report/render/renderers.hpp"

namespace interprobe::render {

namespace {

// Display width of UTF-8 text: count code points, not bytes, so columns stay aligned.
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string paint(const std::string& text, Tone tone, const TextStyle& style) {
  if (!style.color || tone == Tone::plain) return text;
  const char* code = "";
  switch (tone) {
    case Tone::good: code = "32"; break;
    case Tone::warn: code = "33"; break;
    case Tone::bad: code = "1;31"; break;
    case Tone::dim: code = "2"; break;
    case Tone::plain: break;
  }
  return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
}

std::string pad(const std::string& text, std::size_t width, Align align) {
  std::size_t w = display_width(text);
  std::string fill(w < width ? width - w : 0, ' ');
  return align == Align::right ? fill + text : text + fill;
}

void render_table(const Table& t, const TextStyle& style, std::string& out) {
  if (!t.caption.empty()) out += "  " + escape_terminal(t.caption) + "\n";
  std::size_t cols = t.header.size();
  for (const auto& row : t.rows) cols = std::max(cols, row.size());
  std::vector<std::size_t> width(cols, 0);
  std::vector<std::string> header(cols);
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    header[c] = escape_terminal(t.header[c]);
    width[c] = display_width(header[c]);
  }
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : t.rows) {
    std::vector<std::string> r(cols);
    for (std::size_t c = 0; c < row.size(); ++c) {
      r[c] = escape_terminal(row[c].text);
      width[c] = std::max(width[c], display_width(r[c]));
    }
    cells.push_back(std::move(r));
  }
  auto align_of = [&](std::size_t c) { return c < t.align.size() ? t.align[c] : Align::left; };
  auto emit = [&](const std::vector<std::string>& r, const std::vector<Cell>* source, bool bold) {
    std::string line = "  ";
    for (std::size_t c = 0; c < cols; ++c) {
      std::string cell = pad(r[c], width[c], align_of(c));
      Tone tone = source && c < source->size() ? (*source)[c].tone : Tone::plain;
      if (bold && style.color) cell = "\x1b[1m" + cell + "\x1b[0m";
      line += paint(cell, tone, style) + (c + 1 < cols ? "  " : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  if (!t.header.empty()) emit(header, nullptr, true);
  for (std::size_t i = 0; i < cells.size(); ++i) emit(cells[i], &t.rows[i], false);
}

}  // namespace

std::string render_text(const Document& doc, const TextStyle& style) {
  std::string out;
  for (const auto& section : doc.sections) {
    std::string title = escape_terminal(section.title);
    out += (style.color ? "\x1b[1m" + title + "\x1b[0m" : title) + "\n";
    for (const auto& block : section.blocks) {
      if (const auto* kv = std::get_if<KeyValues>(&block)) {
        std::size_t w = 0;
        for (const auto& [k, v] : kv->items) w = std::max(w, display_width(k));
        for (const auto& [k, v] : kv->items)
          out += "  " + pad(escape_terminal(k), w, Align::left) + "  " + paint(escape_terminal(v.text), v.tone, style) + "\n";
      } else if (const auto* t = std::get_if<Table>(&block)) {
        render_table(*t, style, out);
      } else if (const auto* p = std::get_if<Paragraph>(&block)) {
        out += "  " + paint(escape_terminal(p->text), p->tone, style) + "\n";
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace interprobe::render
