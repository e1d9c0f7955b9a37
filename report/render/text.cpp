// Text for a terminal: every block fits `TextStyle::width` columns. Paragraphs and values wrap
// with a hanging indent; a table too wide narrows its widest columns (cells wrap inside them);
// one that cannot narrow enough prints each row as a block, and says so.
#include <algorithm>

#include <fmt/format.h>

#include "report/render/renderers.hpp"
#include "report/render/text_layout.hpp"

namespace interprobe::render {

namespace {

constexpr std::size_t kIndent = 2, kGap = 2;
constexpr std::size_t kMinWidth = 40;            // below this, wrapping helps nobody
constexpr std::size_t kWordFloor = 20;           // longer words may be cut when a column narrows
constexpr std::size_t kColumnFloor = 6;

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

std::string bold(const std::string& text, const TextStyle& style) {
  return style.color ? "\x1b[1m" + text + "\x1b[0m" : text;
}

std::string pad(const std::string& text, std::size_t width, Align align) {
  std::size_t w = display_width(text);
  std::string fill(w < width ? width - w : 0, ' ');
  return align == Align::right ? fill + text : text + fill;
}

void trim_right(std::string& line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
}

// `first` before the first line, `indent` spaces before the others: a hanging indent.
void emit_wrapped(const std::string& first, std::size_t indent, const std::string& text, Tone tone, std::size_t width,
                  const TextStyle& style, std::string& out) {
  std::size_t lead = std::max(display_width(first), indent);
  auto lines = wrap_words(text, width > lead + 8 ? width - lead : 8);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string line = (i == 0 ? pad(first, lead, Align::left) : std::string(lead, ' ')) + paint(lines[i], tone, style);
    trim_right(line);
    out += line + "\n";
  }
}

struct EscapedTable {
  std::size_t cols = 0;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;
};

EscapedTable escape_table(const Table& t) {
  EscapedTable e;
  e.cols = t.header.size();
  for (const auto& row : t.rows) e.cols = std::max(e.cols, row.size());
  e.header.resize(e.cols);
  for (std::size_t c = 0; c < t.header.size(); ++c) e.header[c] = escape_terminal(t.header[c]);
  for (const auto& row : t.rows) {
    std::vector<std::string> r(e.cols);
    for (std::size_t c = 0; c < row.size(); ++c) r[c] = escape_terminal(row[c].text);
    e.cells.push_back(std::move(r));
  }
  return e;
}

// Each row as a block: its first two cells on a lead line, the others as "column: value" under it.
void render_blocks(const Table& t, const EscapedTable& e, const TextStyle& style, std::string& out) {
  const std::size_t lead_width = e.cols > 1 ? [&] {
    std::size_t w = display_width(e.header[0]);
    for (const auto& r : e.cells) w = std::max(w, display_width(r[0]));
    return std::min<std::size_t>(w, 12);
  }() : 0;
  if (e.cols > 1 && !(e.header[0].empty() && e.header[1].empty()))
    out += std::string(kIndent, ' ') + bold(pad(e.header[0], lead_width, Align::left) + "  " + e.header[1], style) + "\n";
  for (std::size_t i = 0; i < e.cells.size(); ++i) {
    const auto& r = e.cells[i];
    auto tone = [&](std::size_t c) { return c < t.rows[i].size() ? t.rows[i][c].tone : Tone::plain; };
    if (e.cols == 1) {
      emit_wrapped(std::string(kIndent, ' '), kIndent, r[0], tone(0), style.width, style, out);
      continue;
    }
    std::string first = std::string(kIndent, ' ') + paint(pad(r[0], lead_width, Align::left), tone(0), style) + "  ";
    // The painted prefix has invisible escapes: wrap against its visible width.
    std::size_t visible = kIndent + std::max(lead_width, display_width(r[0])) + kGap;
    auto lines = wrap_words(r[1], style.width > visible + 8 ? style.width - visible : 8);
    for (std::size_t l = 0; l < lines.size(); ++l)
      out += (l == 0 ? first : std::string(visible, ' ')) + paint(lines[l], tone(1), style) + "\n";
    for (std::size_t c = 2; c < e.cols; ++c) {
      if (r[c].empty()) continue;
      std::string label = std::string(visible, ' ') + (e.header[c].empty() ? "" : e.header[c] + ": ");
      emit_wrapped(label, visible + 2, r[c], tone(c), style.width, style, out);
    }
  }
}

void render_table(const Table& t, const TextStyle& style, std::string& out) {
  if (!t.caption.empty()) emit_wrapped(std::string(kIndent, ' '), kIndent, escape_terminal(t.caption), Tone::plain, style.width, style, out);
  EscapedTable e = escape_table(t);
  if (t.rows_as_blocks_in_text) return render_blocks(t, e, style, out);

  std::vector<std::size_t> natural(e.cols, 0), floor(e.cols, 0);
  auto measure = [&](const std::string& text, std::size_t c) {
    natural[c] = std::max(natural[c], display_width(text));
    floor[c] = std::max(floor[c], std::min(longest_word(text), kWordFloor));
  };
  for (std::size_t c = 0; c < e.cols; ++c) measure(e.header[c], c);
  for (const auto& r : e.cells)
    for (std::size_t c = 0; c < e.cols; ++c) measure(r[c], c);
  for (auto& f : floor) f = std::max(f, kColumnFloor);
  for (std::size_t c = 0; c < std::min(t.unwrapped_columns, e.cols); ++c) floor[c] = natural[c];
  // Two spaces between columns, one when that is what keeps a table (a GPU/NIC matrix) whole.
  std::size_t gap = kGap;
  std::vector<std::size_t> width;
  for (; gap >= 1 && width.empty(); --gap) {
    const std::size_t separators = kIndent + (e.cols > 0 ? (e.cols - 1) * gap : 0);
    width = fit_columns(natural, floor, style.width > separators ? style.width - separators : 0);
    if (!width.empty()) break;
  }
  if (width.empty()) {
    emit_wrapped(std::string(kIndent, ' '), kIndent,
                 fmt::format("({} columns do not fit in {}: one block per row; --format markdown or json keeps the table)",
                             e.cols, style.width),
                 Tone::dim, style.width, style, out);
    return render_blocks(t, e, style, out);
  }

  auto align_of = [&](std::size_t c) { return c < t.align.size() ? t.align[c] : Align::left; };
  auto emit = [&](const std::vector<std::string>& r, const std::vector<Cell>* source, bool is_header) {
    std::vector<std::vector<std::string>> wrapped(e.cols);
    std::size_t height = 1;
    for (std::size_t c = 0; c < e.cols; ++c) {
      wrapped[c] = display_width(r[c]) <= width[c] ? std::vector<std::string>{r[c]} : wrap_words(r[c], width[c]);
      height = std::max(height, wrapped[c].size());
    }
    for (std::size_t l = 0; l < height; ++l) {
      std::string line(kIndent, ' ');
      for (std::size_t c = 0; c < e.cols; ++c) {
        std::string cell = pad(l < wrapped[c].size() ? wrapped[c][l] : "", width[c], align_of(c));
        Tone tone = source && c < source->size() ? (*source)[c].tone : Tone::plain;
        line += (is_header ? bold(cell, style) : paint(cell, tone, style)) + (c + 1 < e.cols ? std::string(gap, ' ') : "");
      }
      trim_right(line);
      out += line + "\n";
    }
  };
  if (!t.header.empty()) emit(e.header, nullptr, true);
  for (std::size_t i = 0; i < e.cells.size(); ++i) emit(e.cells[i], &t.rows[i], false);
}

void render_key_values(const KeyValues& kv, const TextStyle& style, std::string& out) {
  std::size_t key_width = 0;
  for (const auto& [k, v] : kv.items) key_width = std::max(key_width, display_width(escape_terminal(k)));
  for (const auto& [k, v] : kv.items) {
    std::string first = std::string(kIndent, ' ') + pad(escape_terminal(k), key_width, Align::left) + std::string(kGap, ' ');
    emit_wrapped(first, kIndent + key_width + kGap, escape_terminal(v.text), v.tone, style.width, style, out);
  }
}

}  // namespace

std::string render_text(const Document& doc, const TextStyle& given) {
  TextStyle style = given;
  style.width = std::max(style.width, kMinWidth);
  std::string out;
  for (const auto& section : doc.sections) {
    for (const auto& line : wrap_words(escape_terminal(section.title), style.width)) out += bold(line, style) + "\n";
    for (const auto& block : section.blocks) {
      if (const auto* kv = std::get_if<KeyValues>(&block)) {
        render_key_values(*kv, style, out);
      } else if (const auto* t = std::get_if<Table>(&block)) {
        render_table(*t, style, out);
      } else if (const auto* p = std::get_if<Paragraph>(&block)) {
        emit_wrapped(std::string(kIndent, ' '), kIndent, escape_terminal(p->text), p->tone, style.width, style, out);
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace interprobe::render
