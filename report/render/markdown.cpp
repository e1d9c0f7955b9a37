#include "report/render/renderers.hpp"

namespace interprobe::render {

namespace {

void render_table(const Table& t, std::string& out) {
  if (!t.caption.empty()) out += "*" + escape_markdown(t.caption) + "*\n\n";
  std::size_t cols = t.header.size();
  for (const auto& row : t.rows) cols = std::max(cols, row.size());
  if (cols == 0) return;
  out += "|";
  for (std::size_t c = 0; c < cols; ++c) out += " " + (c < t.header.size() ? escape_markdown(t.header[c]) : std::string()) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < cols; ++c) out += (c < t.align.size() && t.align[c] == Align::right) ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (std::size_t c = 0; c < cols; ++c) {
      std::string cell = c < row.size() ? escape_markdown(row[c].text) : std::string();
      if (c < row.size() && row[c].tone == Tone::bad && !cell.empty()) cell = "**" + cell + "**";
      out += " " + cell + " |";
    }
    out += "\n";
  }
  out += "\n";
}

}  // namespace

std::string render_markdown(const Document& doc) {
  std::string out = "# " + escape_markdown(doc.title) + "\n\n";
  for (const auto& section : doc.sections) {
    out += "## " + escape_markdown(section.title) + "\n\n";
    for (const auto& block : section.blocks) {
      if (const auto* kv = std::get_if<KeyValues>(&block)) {
        Table t{"", {"item", "value"}, {}, {}};
        for (const auto& [k, v] : kv->items) t.rows.push_back({Cell(k), v});
        render_table(t, out);
      } else if (const auto* t = std::get_if<Table>(&block)) {
        render_table(*t, out);
      } else if (const auto* p = std::get_if<Paragraph>(&block)) {
        std::string text = escape_markdown(p->text);
        if (!text.empty() && text.front() == '#') text.insert(0, "\\");  // a paragraph, not a heading
        out += text + "\n\n";
      }
    }
  }
  return out;
}

}  // namespace interprobe::render
