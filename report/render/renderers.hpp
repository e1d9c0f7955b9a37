#pragma once
#include <cstddef>
#include <string>

#include "model/report.hpp"
#include "report/render/document.hpp"

namespace interprobe::render {

enum class Format { text, json, markdown, html, prometheus };

// A width no table or paragraph reaches: text off a terminal is never wrapped.
inline constexpr std::size_t kUnlimitedWidth = 1'000'000;

struct TextStyle {
  bool color = false;
  std::size_t width = 100;  // terminal columns: paragraphs wrap, tables narrow or fold to fit
};

std::string render_text(const Document& doc, const TextStyle& style);
std::string render_markdown(const Document& doc);
// One self-contained page with inline SVG charts (report/render/html/).
std::string render_html(const report::Report& report, const ViewOptions& views);
std::string render(const report::Report& report, Format format, const TextStyle& style, const ViewOptions& views = {});

// Untrusted strings from the machine: control characters (terminal escapes) become \xNN.
std::string escape_terminal(const std::string& s);
// HTML, SVG and XML (JUnit) text and attribute values: controls as in the terminal (newlines
// kept), then & < > " ' as character references.
std::string escape_xml(const std::string& s);
// Markdown table/inline text: pipes, backticks, brackets, HTML and newlines neutralised.
std::string escape_markdown(const std::string& s);

// Whether colour is wanted: a TTY, no --no-color, no NO_COLOR in the environment.
bool color_wanted(bool is_tty, bool no_color_flag);

}  // namespace interprobe::render
