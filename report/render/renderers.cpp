#include "report/render/renderers.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "common/text.hpp"
#include "model/json.hpp"
#include "report/render/prometheus.hpp"

namespace interprobe::render {

std::string escape_terminal(const std::string& s) { return printable(s); }

std::string escape_xml(const std::string& s) {
  std::string safe = printable(s, {.keep_newlines = true});
  std::string out;
  out.reserve(safe.size() + 16);
  for (char c : safe) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_markdown(const std::string& s) {
  // Controls first (their escapes then get their backslash escaped, and show as written); then
  // what would end a table cell, start markup or be taken for HTML.
  std::string safe = printable(s, {.keep_newlines = true});
  std::string out;
  out.reserve(safe.size());
  for (char c : safe) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '\\': out += "\\\\"; break;
      case '`': out += "\\`"; break;
      case '*': out += "\\*"; break;
      case '_': out += "\\_"; break;
      case '[': out += "\\["; break;
      case ']': out += "\\]"; break;
      case '~': out += "\\~"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n': case '\t': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

bool color_wanted(bool is_tty, bool no_color_flag) {
  const char* env = std::getenv("NO_COLOR");
  if (env && *env) return false;
  return is_tty && !no_color_flag;
}

std::string render(const report::Report& report, Format format, const TextStyle& style, const ViewOptions& views) {
  switch (format) {
    case Format::json: return report::to_json_text(report);
    case Format::markdown: return render_markdown(build_document(report, views));
    case Format::html: return render_html(report, views);
    case Format::prometheus: return render_prometheus(report);
    case Format::text: return render_text(build_document(report, views), style);
  }
  return {};
}

}  // namespace interprobe::render
